// `agent-wallet balance <credential> [--chain <id>] [--tokens <a,b>]`: a credential's coin and token balances.
import { readableUnits } from "../../sdk";
import { UsageError } from "../args";
import { EXIT } from "../exit-codes";
import { chainOption, connectWithCredential, print, type Context } from "./shared";

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** --tokens as a list of addresses; left out, the service reads the tokens it lists on the chain and those the credential's limits cap. */
function tokensOption(ctx: Context): string[] | undefined {
  const raw = ctx.parsed.values.tokens;
  if (raw === undefined) return undefined;
  const tokens = String(raw)
    .split(",")
    .map((token) => token.trim())
    .filter(Boolean);
  const bad = tokens.find((token) => !ADDRESS.test(token));
  if (bad !== undefined || !tokens.length) {
    throw new UsageError(
      `--tokens takes ERC-20 contract addresses separated by commas (${JSON.stringify(bad ?? raw)} is not one)`,
      ctx.command,
    );
  }
  return tokens;
}

export async function run(ctx: Context): Promise<number> {
  // Without --chain the service reads the balance on its only chain (or says which chains it has).
  const chainId = ctx.parsed.values.chain === undefined ? undefined : chainOption(ctx);
  const tokens = tokensOption(ctx);
  const { client, credential } = await connectWithCredential(ctx);
  const balance = await client.getBalance(
    { credential_id: credential.id, ...(chainId === undefined ? {} : { chain_id: chainId }), ...(tokens ? { tokens } : {}) },
    { signal: ctx.signal },
  );
  // The coin first, as before; each token below it in its own units (a contract that does not answer says so), each
  // with its value when the service gives one (servers before it do not); in a few digits, cut down, never the 18 of
  // its wei (--json has every digit).
  const worth = (fiat: { text: string } | null | undefined) => (fiat ? ` ≈ ${fiat.text}` : "");
  const where = `${credential.name} ${balance.address} on ${balance.chain_name}`;
  const lines = [
    `${readableUnits(balance.formatted)} ${balance.symbol}${worth(balance.fiat)}  (${where})`,
    ...balance.tokens.map((token) =>
      token.formatted !== null
        ? `${readableUnits(token.formatted)} ${token.symbol}${worth(token.fiat)}  (token ${token.token})`
        : `${token.balance ?? "unavailable"}  (token ${token.token}, which does not answer as an ERC-20)`,
    ),
  ];
  print(ctx, balance, lines.join("\n"));
  return EXIT.ok;
}
