// `agent-wallet send <credential> [--chain] --to --value [--data]`: sign and broadcast a transaction, once the person
// approves. Without --chain, the wallet's only chain. From an allowance this CLI's own key spends, the key signs the
// payment and the relayer sends it (the SDK's payFromAllowance), with nobody asked.
import { getAddress, type Hex } from "viem";
import { payFromAllowance, ToolError } from "../../sdk";
import { parseAmount } from "../amount";
import { UsageError } from "../args";
import { chainOption, onlyChain, ownKeyAllowance, sensitive, trustedEnforcer, type Context } from "./shared";

export async function run(ctx: Context): Promise<number> {
  const named = chainOption(ctx);
  const to = requiredOption(ctx, "to");
  const value = parseAmount(requiredOption(ctx, "value"));
  const data = ctx.parsed.values.data as string | undefined;
  const enforcer = trustedEnforcer(ctx);
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
      const own = await ownKeyAllowance(ctx, client, credentialId, chainId);
      if (!own) throw error;
      return payFromAllowance(
        client,
        own.account,
        own.permission,
        { to: getAddress(to), value: BigInt(value), ...(data ? { data: data as Hex } : {}) },
        {
          credentialId,
          idempotencyKey,
          exactExecutionEnforcer: enforcer,
          signal: ctx.signal,
        },
      );
    }
  });
}

function requiredOption(ctx: Context, name: string): string {
  const raw = ctx.parsed.values[name];
  if (typeof raw !== "string" || !raw) throw new UsageError(`--${name} is required`, ctx.command);
  return raw;
}
