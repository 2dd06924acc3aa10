// The payments an agent sends itself from an allowance its own key spends, read from the chain's RedeemedDelegation
// events (lib/allowances/own-payments.ts, decision 0043) through a provider that fails as hosted ones do, on a chain
// that mines a block every 2 seconds with a mempool, on SQLite (e2e/allowances/own-payments-faults.test.ts) and on
// PostgreSQL (e2e/postgres/own-payments-faults.test.ts). A real hardhat node behind a real proxy (fault-proxy) that
// refuses eth_getLogs over more than a few blocks, as providers cap its range, and answers 503 and 429; and a reorg,
// which hardhat's evm_snapshot and evm_revert stand in for. Whatever the provider does, each payment is recorded once
// as a landed spend with its audit event, and the allowance's cursor never passes a block that was not read.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createWalletClient, http, parseEther, type Hex, type TransactionReceipt } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ownRedemption } from "agent-wallet/sdk";
import type { AllowanceWorld } from "./allowances";
import { chainDefinition } from "./chain";
import type { FaultProxy, ProxiedCall } from "./fault-proxy";
import { startFaultyWorld } from "./faulty-world";

const PAYMENT = parseEther("0.001");
/** The most blocks the provider's eth_getLogs answers for. */
const RANGE_CAP = 3n;

export function ownPaymentsFaultsSuite(database: "sqlite" | "postgres") {
  describe(`the agent's own payments read through a failing provider (${database}, 2-second blocks)`, { timeout: 300_000 }, () => {
    let world: AllowanceWorld;
    let proxy: FaultProxy;
    let stop: (() => Promise<void>) | undefined;
    let lib: {
      allowances: typeof import("@/lib/allowances/allowances");
      chains: typeof import("@/lib/wallet/chains");
      db: typeof import("@/lib/db");
      encoding: typeof import("@/lib/allowances/delegation-encoding");
      ownPayments: typeof import("@/lib/allowances/own-payments");
    };

    before(async () => {
      ({ world, proxy, stop } = await startFaultyWorld(database));
      lib = {
        allowances: await import("@/lib/allowances/allowances"),
        chains: await import("@/lib/wallet/chains"),
        db: await import("@/lib/db"),
        encoding: await import("@/lib/allowances/delegation-encoding"),
        ownPayments: await import("@/lib/allowances/own-payments"),
      };
    });
    after(() => stop?.());

    const ask = (method: string, params: unknown[] = []) =>
      world.chain.client.request({ method: method as never, params: params as never });
    /** `receipt`'s block with CONFIRMATIONS blocks on it: its payment is read from then on. */
    const confirmed = (receipt: TransactionReceipt) => world.chain.untilBlock(receipt.blockNumber + lib.ownPayments.CONFIRMATIONS);

    /**
     * A person's allowance of 0.01 ETH a day to a shop, delegated to a key the agent holds (with ETH for its gas), read
     * from the block it is given at as approving request_allowance leaves it. `pay` sends the shop 0.001 ETH from the
     * agent's key straight to the node, `read` is what a view of the allowance runs.
     */
    async function ownKeyAllowance() {
      const person = await world.newPerson("1");
      const shop = world.recipient();
      const agentKey = privateKeyToAccount(generatePrivateKey());
      await world.chain.fund(agentKey.address, "1");
      const { id } = await world.allow(person, { recipients: [shop], delegate: agentKey.address, transactions: 10 });
      // what lib/allowances/asked.ts stores when the person approves: the agent's own payments are read from here on
      const from = await world.chain.client.getBlockNumber({ cacheTime: 0 });
      await lib.db.db().allowance.update({ where: { id }, data: { ownPaymentsFrom: Number(from) } });
      const { delegations } = await lib.allowances.findAllowance(id);
      const root = lib.allowances.storedDelegation(world.framework, delegations[0]).delegation;
      const context = lib.encoding.encodedDelegations([root]);
      const wallet = createWalletClient({ account: agentKey, chain: chainDefinition(world.chain), transport: http(world.chain.rpcUrl) });
      const manager = { delegation_manager: world.framework.DelegationManager };
      return {
        from,
        pay: async () => {
          const hash = await wallet.sendTransaction(ownRedemption(manager, { context }, { target: shop, value: PAYMENT }));
          const receipt = await world.chain.client.waitForTransactionReceipt({ hash });
          assert.equal(receipt.status, "success");
          return receipt;
        },
        read: async () => lib.ownPayments.recordOwnPayments(await lib.allowances.findAllowance(id)),
        cursor: async () => BigInt((await lib.db.db().allowance.findUniqueOrThrow({ where: { id } })).ownPaymentsFrom!),
        /** the spends recorded, each as its transaction and status */
        spends: async () =>
          (await lib.db.db().allowanceSpend.findMany({ where: { allowanceId: id }, orderBy: { createdAt: "asc" } })).map(
            ({ txHash, status }) => [txHash, status],
          ),
        audited: () => lib.db.db().auditEvent.count({ where: { type: "allowance.spent", data: { contains: id } } }),
      };
    }
    const landed = (...receipts: TransactionReceipt[]) => receipts.map((receipt) => [receipt.transactionHash, "landed"]);

    it("a provider that refuses eth_getLogs over 3 blocks: every payment recorded once, blocks read in order, none skipped", async () => {
      const own = await ownKeyAllowance();
      const read: { from: bigint; to: bigint; refused: boolean }[] = [];
      proxy.refuse = (call: ProxiedCall) => {
        if (call.method !== "eth_getLogs") return;
        const [filter] = call.params as [{ fromBlock: Hex; toBlock: Hex }];
        const range = { from: BigInt(filter.fromBlock), to: BigInt(filter.toBlock) };
        const refused = range.to - range.from + 1n > RANGE_CAP;
        read.push({ ...range, refused });
        // as Alchemy words its cap
        if (refused) return { code: -32602, message: `You can make eth_getLogs requests with up to a ${RANGE_CAP} block range` };
      };
      try {
        // the payments a cap's width apart, so that no read of the capped provider sees two
        const receipts: TransactionReceipt[] = [];
        for (let index = 0; index < 3; index++) {
          receipts.push(await own.pay());
          await world.chain.untilBlock(receipts[index].blockNumber + RANGE_CAP);
        }
        await confirmed(receipts[2]);
        assert.equal((await own.read()).length, 3);
        assert.deepEqual(await own.spends(), landed(...receipts));
        assert.equal(await own.audited(), 3);
        assert.ok(
          read.some((range) => range.refused),
          "the provider refused the first range",
        );
        const answered = read.filter((range) => !range.refused);
        const cursor = await own.cursor();
        assert.equal(answered[0].from, own.from);
        answered.forEach((range, index) => index && assert.equal(range.from, answered[index - 1].to + 1n, "no block skipped"));
        assert.equal(cursor, answered.at(-1)!.to + 1n, "the cursor stops where the blocks read end");
        assert.ok(cursor > receipts[2].blockNumber);

        // the next read asks within the cap at once, and records only the new payment
        const next = read.length;
        const fourth = await own.pay();
        await confirmed(fourth);
        assert.equal((await own.read()).length, 1);
        assert.deepEqual(await own.spends(), landed(...receipts, fourth));
        assert.equal(await own.audited(), 4);
        assert.ok(read.length > next);
        assert.deepEqual(
          read.slice(next).filter((range) => range.refused),
          [],
        );
        assert.equal(read[next].from, cursor, "read on from where the last read ended");
      } finally {
        proxy.refuse = undefined;
      }
    });

    it("a provider answering 503, then 429, mid-read: the read fails, nothing recorded twice or lost, no block passed unread", async () => {
      const own = await ownKeyAllowance();
      const first = await own.pay();
      const second = await own.pay();
      await confirmed(second);
      const from = proxy.seen.length;
      const logsAsked = () =>
        proxy.seen
          .slice(from)
          .flatMap((request) => request.methods)
          .filter((method) => method === "eth_getLogs").length;
      try {
        proxy.fault = (calls) => (calls.some((call) => call.method === "eth_getLogs") ? { status: 503 } : undefined);
        await assert.rejects(own.read(), lib.chains.ChainUnansweredError);
        // the transport's three tries: a provider failing is not a cap on the range, which stays as wide
        assert.equal(logsAsked(), 3);
        assert.equal(await own.cursor(), own.from, "the cursor did not move");
        assert.deepEqual(await own.spends(), []);

        // the second payment's transaction cannot be read: the first is recorded, the cursor stays before the second
        const secondOf = (call: ProxiedCall) => call.method === "eth_getTransactionByHash" && call.params?.[0] === second.transactionHash;
        proxy.fault = (calls) => (calls.some(secondOf) ? { status: 429, retryAfter: "1" } : undefined);
        await assert.rejects(own.read(), lib.chains.ChainUnansweredError);
        assert.deepEqual(await own.spends(), landed(first));
        assert.ok((await own.cursor()) <= second.blockNumber, "the cursor did not pass the payment it could not read");
      } finally {
        proxy.fault = undefined;
      }
      await own.read();
      assert.deepEqual(await own.spends(), landed(first, second), "each recorded once");
      assert.equal(await own.audited(), 2);
      assert.ok((await own.cursor()) > second.blockNumber);
    });

    it("a payment whose block a reorg drops is never recorded; the one mined in its place is, once confirmed", async () => {
      const own = await ownKeyAllowance();
      const snapshot = await ask("evm_snapshot");
      const dropped = await own.pay();
      // a view reads as soon as it is mined: too new to be read yet
      assert.deepEqual(await own.read(), []);
      assert.ok((await own.cursor()) <= dropped.blockNumber, "the cursor stays before a block not yet confirmed");

      await ask("evm_revert", [snapshot]);
      await assert.rejects(world.chain.client.getTransactionReceipt({ hash: dropped.transactionHash }), "the payment is gone");
      const kept = await own.pay();
      await confirmed(kept);
      // the height the dropped payment was mined at is read too
      await world.chain.untilBlock(dropped.blockNumber + lib.ownPayments.CONFIRMATIONS);
      await own.read();
      assert.deepEqual(await own.spends(), landed(kept), "only the payment the chain kept");
      assert.equal(await own.audited(), 1);
    });
  });
}
