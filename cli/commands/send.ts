// `agent-wallet send <credential> [--chain] --to --value [--data]`: sign and broadcast a transaction, once the person
// approves. Without --chain, the wallet's only chain.
import { parseAmount } from "../amount";
import { UsageError } from "../args";
import { chainOption, onlyChain, sensitive, type Context } from "./shared";

export async function run(ctx: Context): Promise<number> {
  const named = chainOption(ctx);
  const to = requiredOption(ctx, "to");
  const value = parseAmount(requiredOption(ctx, "value"));
  const data = ctx.parsed.values.data as string | undefined;
  return sensitive(ctx, async (client, credentialId, listed, idempotencyKey) => {
    const chainId = named ?? (await onlyChain(ctx, client, credentialId, listed));
    return client.sendTransaction(
      { credential_id: credentialId, chain_id: chainId, to, value, ...(data ? { data } : {}), idempotency_key: idempotencyKey },
      { signal: ctx.signal },
    );
  });
}

function requiredOption(ctx: Context, name: string): string {
  const raw = ctx.parsed.values[name];
  if (typeof raw !== "string" || !raw) throw new UsageError(`--${name} is required`, ctx.command);
  return raw;
}
