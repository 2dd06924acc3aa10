// Payments from allowances side by side, on a chain that mines a block every 2 seconds with a mempool (issue 55,
// finding 5), on SQLite (e2e/allowances/pipelined-payments.test.ts) and on PostgreSQL
// (e2e/postgres/pipelined-payments.test.ts): one suite per test file, as a process holds one database client. The
// chain has two relayers of payments (ALLOWANCE_RELAYERS lists hardhat's accounts 19 and 17). An allowance's payment
// counts those of its allowance still in flight against what is left, so that several share a block; what is sent
// never passes the cap, and nothing sent reverts.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { formatEther, getAddress, parseEther, type Address, type Hex } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { agentPayingShop, relayersSetting, startAllowanceWorld, type AllowanceWorld } from "./allowances";
import { HARDHAT_MNEMONIC } from "@/lib/allowances/settings";

const PAYMENT = parseEther("0.0003");
/** relayersSetting's second relayer */
const SECOND_RELAYER = mnemonicToAccount(HARDHAT_MNEMONIC, { addressIndex: 17 });

export function pipelinedPaymentsSuite(database: "sqlite" | "postgres") {
  describe(`payments from allowances side by side (${database}, 2-second blocks, two relayers)`, { timeout: 600_000 }, () => {
    let world: AllowanceWorld;
    let lib: {
      agent: typeof import("@/lib/allowances/agent");
      clock: typeof import("@/lib/clock");
      db: typeof import("@/lib/db");
    };
    const relayers: Address[] = [];

    before(async () => {
      world = await startAllowanceWorld({
        database,
        env: {
          ALLOWANCE_RELAYERS: relayersSetting({ chainId: 31337 }, 2),
          // far more payments than one person's default daily gas
          ALLOWANCE_GAS_BUDGET: "100000000",
        },
      });
      lib = {
        agent: await import("@/lib/allowances/agent"),
        clock: await import("@/lib/clock"),
        db: await import("@/lib/db"),
      };
      relayers.push(world.relayer, SECOND_RELAYER.address);
      await world.chain.mineEvery(2000);
    });
    after(async () => {
      await world?.stop();
    });

    /** How many transactions both relayers have had mined. */
    const relayersSent = async () =>
      (await Promise.all(relayers.map((address) => world.chain.client.getTransactionCount({ address })))).reduce((a, b) => a + b, 0);

    /** The payments' outcomes: each landed one's request and transaction, and what refused the others. */
    async function outcomes(results: PromiseSettledResult<unknown>[]) {
      const paid = results.flatMap((result) =>
        result.status === "fulfilled" && !("toPerson" in (result.value as object))
          ? [result.value as { request_id: string; tx_hash?: string; status: string }]
          : [],
      );
      const refusals = results.flatMap((result) => (result.status === "rejected" ? [(result.reason as Error).message] : []));
      const receipts = await Promise.all(paid.map((view) => world.chain.client.getTransactionReceipt({ hash: view.tx_hash as Hex })));
      const transactions = await Promise.all(paid.map((view) => world.chain.client.getTransaction({ hash: view.tx_hash as Hex })));
      return { paid, refusals, receipts, senders: new Set(transactions.map((transaction) => getAddress(transaction.from))) };
    }

    it("twelve payments of one allowance share blocks: each lands and completes its request, in fewer blocks than payments", async () => {
      const { shop, pay } = await agentPayingShop(world, PAYMENT, { native: parseEther("0.01") });
      const results = await Promise.allSettled(Array.from({ length: 12 }, () => pay()));
      const { paid, refusals, receipts } = await outcomes(results);
      assert.deepEqual(refusals, []);
      assert.equal(paid.length, 12);
      assert.ok(
        paid.every((view) => view.status === "completed"),
        JSON.stringify(paid.map((view) => view.status)),
      );
      assert.ok(receipts.every((receipt) => receipt.status === "success"));
      assert.equal(await world.balance(shop), 12n * PAYMENT);
      // One allowance paid at most once a block while its lease was held until the receipt: twelve blocks.
      const blocks = new Set(receipts.map((receipt) => receipt.blockNumber));
      assert.ok(blocks.size <= 6, `twelve payments took ${blocks.size} blocks`);
      const rows = await lib.db.db().agentRequest.findMany({ where: { id: { in: paid.map((view) => view.request_id) } } });
      assert.deepEqual(
        rows.map((row) => row.txHash).sort(),
        paid.map((view) => view.tx_hash).sort(),
        "each request names its own transaction",
      );
    });

    it("twenty payments at once where ten fit: exactly ten are sent and land, the rest refused over the cap, none reverts", async () => {
      const { shop, pay } = await agentPayingShop(world, PAYMENT, { native: 10n * PAYMENT });
      const sentBefore = await relayersSent();
      const results = await Promise.allSettled(Array.from({ length: 20 }, () => pay()));
      const { paid, refusals, receipts } = await outcomes(results);
      assert.equal(paid.length, 10, JSON.stringify(refusals));
      assert.equal(refusals.length, 10);
      assert.ok(
        refusals.every((message) => /is over your allowance of 0\.003 ETH a day/.test(message)),
        JSON.stringify(refusals),
      );
      assert.ok(receipts.every((receipt) => receipt.status === "success"));
      assert.equal(await world.balance(shop), 10n * PAYMENT);
      assert.equal((await relayersSent()) - sentBefore, 10, "the relayers sent only what landed");
      const spends = await lib.db.db().allowanceSpend.groupBy({ by: ["status"], where: { recipient: shop }, _count: true });
      assert.deepEqual(
        spends.map((group) => [group.status, group._count]),
        [["landed", 10]],
      );
    });

    it("twelve payments at once where the account holds five: five land, the rest refused before a send, none reverts", async () => {
      const { person, shop, pay } = await agentPayingShop(world, PAYMENT, { native: parseEther("0.01") });
      // The rehearsal runs at the latest block, where the payments still on their way have not moved anything yet.
      await world.chain.fund(person.address, formatEther(5n * PAYMENT + PAYMENT / 2n));
      const sentBefore = await relayersSent();
      const results = await Promise.allSettled(Array.from({ length: 12 }, () => pay()));
      const { paid, refusals, receipts } = await outcomes(results);
      assert.equal(paid.length, 5, JSON.stringify(refusals));
      assert.ok(
        refusals.every((message) => /payments not yet mined move|the account holds/.test(message)),
        JSON.stringify(refusals),
      );
      assert.ok(receipts.every((receipt) => receipt.status === "success"));
      assert.equal(await world.balance(shop), 5n * PAYMENT);
      assert.equal((await relayersSent()) - sentBefore, 5, "the relayers sent only what landed");
    });

    it("several people's agents pay at once through both relayers, each relayer's nonces in order, every payment landed", async () => {
      const agents = await Promise.all(Array.from({ length: 4 }, () => agentPayingShop(world, PAYMENT, { native: parseEther("0.01") })));
      const results = await Promise.allSettled(agents.flatMap(({ pay }) => Array.from({ length: 5 }, () => pay())));
      const { paid, refusals, receipts, senders } = await outcomes(results);
      assert.deepEqual(refusals, []);
      assert.equal(paid.length, 20);
      assert.ok(receipts.every((receipt) => receipt.status === "success"));
      for (const { shop } of agents) assert.equal(await world.balance(shop), 5n * PAYMENT);
      assert.deepEqual([...senders].sort(), [...relayers].sort(), "both relayers sent payments");
      // nothing of either relayer's is left waiting: no nonce was skipped or taken twice
      for (const address of relayers) {
        const [mined, pending] = await Promise.all([
          world.chain.client.getTransactionCount({ address, blockTag: "latest" }),
          world.chain.client.getTransactionCount({ address, blockTag: "pending" }),
        ]);
        assert.equal(pending, mined);
      }
    });
  });
}
