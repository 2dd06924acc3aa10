// `agent-wallet balance <credential> [--chain <id>]`: a credential's native balance.
import { EXIT } from "../exit-codes";
import { chainOption, connectWithCredential, print, type Context } from "./shared";

export async function run(ctx: Context): Promise<number> {
  // Without --chain the service reads the balance on its only chain (or says which chains it has).
  const chainId = ctx.parsed.values.chain === undefined ? undefined : chainOption(ctx);
  const { client, credential } = await connectWithCredential(ctx);
  const balance = await client.getBalance(
    { credential_id: credential.id, ...(chainId === undefined ? {} : { chain_id: chainId }) },
    { signal: ctx.signal },
  );
  print(
    ctx,
    balance,
    `${balance.formatted} ${balance.symbol}  (${balance.wei} wei, ${credential.name} ${balance.address} on ${balance.chain_name})`,
  );
  return EXIT.ok;
}
