// `agent-wallet send <credential> [--chain] --to --value [--data]`: sign and broadcast a transaction, once the person
// approves. Without --chain, the wallet's only chain. From an allowance this CLI's own key spends, the key signs the
// payment and the relayer sends it (the SDK's payFromAllowance), with nobody asked.
import { getAddress, isAddressEqual, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { payFromAllowance, ToolError, type AgentWalletClient } from "../../sdk";
import { parseAmount } from "../amount";
import { UsageError } from "../args";
import { loadAgentKey } from "../config";
import { chainOption, onlyChain, sensitive, type Context } from "./shared";

export async function run(ctx: Context): Promise<number> {
  const named = chainOption(ctx);
  const to = requiredOption(ctx, "to");
  const value = parseAmount(requiredOption(ctx, "value"));
  const data = ctx.parsed.values.data as string | undefined;
  const enforcer = ctx.parsed.values["exact-execution-enforcer"] as string | undefined;
  if (enforcer !== undefined && !/^0x[0-9a-fA-F]{40}$/.test(enforcer))
    throw new UsageError("--exact-execution-enforcer must be a 0x-prefixed address", ctx.command);
  return sensitive(ctx, async (client, credentialId, listed, idempotencyKey) => {
    const chainId = named ?? (await onlyChain(ctx, client, credentialId, listed));
    const payment = {
      credential_id: credentialId,
      chain_id: chainId,
      to,
      value,
      ...(data ? { data } : {}),
      idempotency_key: idempotencyKey,
    };
    try {
      return await client.sendTransaction(payment, { signal: ctx.signal });
    } catch (error) {
      if (!(error instanceof ToolError && error.details?.error === "agent_signs_payments")) throw error;
      const own = await ownAllowance(ctx, client, credentialId, chainId);
      if (!own) throw error;
      return payFromAllowance(
        client,
        own.account,
        own.permission,
        { to: getAddress(to), value: BigInt(value), ...(data ? { data: data as Hex } : {}) },
        {
          credentialId,
          idempotencyKey,
          ...(enforcer && { exactExecutionEnforcer: getAddress(enforcer) }),
          signal: ctx.signal,
        },
      );
    }
  });
}

/** The credential's allowance on the chain that this CLI's key spends, with that key; null when it is not this key's. */
async function ownAllowance(ctx: Context, client: AgentWalletClient, credentialId: string, chainId: number) {
  const privateKey = loadAgentKey(ctx.io.env);
  if (!privateKey) return null;
  const account = privateKeyToAccount(privateKey);
  const { allowances } = await client.getAllowance({ credential_id: credentialId }, { signal: ctx.signal });
  const permission = allowances.find(
    (allowance) =>
      allowance.chain_id === chainId && allowance.permission && isAddressEqual(allowance.permission.to as Address, account.address),
  )?.permission;
  return permission ? { account, permission } : null;
}

function requiredOption(ctx: Context, name: string): string {
  const raw = ctx.parsed.values[name];
  if (typeof raw !== "string" || !raw) throw new UsageError(`--${name} is required`, ctx.command);
  return raw;
}
