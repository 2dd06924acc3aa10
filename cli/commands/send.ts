// `agent-wallet send <credential> --chain --to --value [--data]`: sign and broadcast a transaction, once the person approves.
import { parseAmount } from "../amount";
import { UsageError } from "../args";
import { chainOption, sensitive, type Context } from "./shared";

export async function run(ctx: Context): Promise<number> {
  const chainId = chainOption(ctx);
  const to = requiredOption(ctx, "to");
  const value = parseAmount(requiredOption(ctx, "value"));
  const data = ctx.parsed.values.data as string | undefined;
  return sensitive(ctx, (client, credentialId) =>
    client.sendTransaction(
      { credential_id: credentialId, chain_id: chainId, to, value, ...(data ? { data } : {}) },
      { signal: ctx.signal },
    ),
  );
}

function requiredOption(ctx: Context, name: string): string {
  const raw = ctx.parsed.values[name];
  if (typeof raw !== "string" || !raw) throw new UsageError(`--${name} is required`, ctx.command);
  return raw;
}
