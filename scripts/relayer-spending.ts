// npm run relayer:spending [-- --days N]: what each chain's relayer paid for every person in the last N days (1 by
// default) and what it holds now, from the database the app is configured with. Exit 0; 2: configuration or database.
import { formatEther } from "viem";
import { config, ConfigError } from "@/lib/config";
import { db, disconnectDatabase } from "@/lib/db";
import { relayerSpending } from "@/lib/allowances/relayer-ledger";
import { relayerAccount, relayLimits } from "@/lib/allowances/settings";
import { onChain } from "@/lib/wallet/chains";

function fail(message: string): never {
  console.error(`relayer:spending: ${message}`);
  process.exit(2);
}

const at = process.argv.indexOf("--days");
const days = at === -1 ? 1 : Number(process.argv[at + 1]);
if (!Number.isFinite(days) || days <= 0) fail("--days takes a positive number");

let chains;
try {
  chains = config().chains;
  relayLimits();
} catch (error) {
  fail(error instanceof ConfigError ? error.message : (error as Error).name);
}

const spending = await relayerSpending(new Date(Date.now() - days * 86_400_000)).catch((error: Error) =>
  fail(`cannot read the database: ${error.name}`),
);
const emails = new Map(
  (await db().user.findMany({ where: { id: { in: spending.flatMap((row) => row.userId ?? []) } }, select: { id: true, email: true } })).map(
    (user) => [user.id, user.email],
  ),
);
const budget = relayLimits().gasBudget;
for (const chain of chains) {
  const relayer = relayerAccount(chain.id);
  if (!relayer) continue;
  const balance = await onChain(chain.id, (client) => client.getBalance({ address: relayer.address })).then(
    (wei) => `${formatEther(wei)} ${chain.symbol}`,
    () => "unknown (the chain did not answer)",
  );
  console.log(`${chain.name} (chain ${chain.id}): relayer ${relayer.address} holds ${balance}`);
  const rows = spending.filter((row) => row.chainId === chain.id);
  if (!rows.length) console.log(`  nothing relayed in the last ${days} day(s)`);
  for (const row of rows) {
    const who = row.userId ? `${emails.get(row.userId) ?? "(deleted account)"} ${row.userId}` : "(no person)";
    console.log(
      `  ${who}: ${row.transactions} transaction(s), ${row.reverted} reverted, ${row.gas} gas, ` +
        `${formatEther(row.fees)} ${chain.symbol} in fees` +
        (days === 1 ? ` (${(Number((row.gas * 1000n) / budget) / 10).toFixed(1)} % of the day's budget)` : ""),
    );
  }
}
await disconnectDatabase();
