// Payments from an allowance through a fee spike, on a chain that mines a block every 2 seconds with a mempool (issue
// 55, finding 4), on SQLite (e2e/allowances/fee-spike.test.ts) and on PostgreSQL (e2e/postgres/fee-spike.test.ts): one
// suite per test file, as a process holds one database client. The base fee is held by the test (hardhat's
// hardhat_setNextBlockBaseFeePerGas before every block): 1 gwei, then 50 or 150 times that. The operator lets the
// relayer pay at most 100 gwei per gas, and revocations have a relayer of their own. The chain charges an L1 data fee
// as OP-stack chains do, from a stand-in of their GasPriceOracle: 1 gwei per byte of its call.
import { after, before, describe, it, mock } from "node:test";
import assert from "node:assert/strict";
import { encodeFunctionData, parseAbi, parseEther, parseGwei, parseTransaction, serializeTransaction, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { agentPayingShop, signAllowanceFor, startAllowanceWorld, type AllowanceWorld } from "./allowances";
import { countingProxy, type CountingProxy, type RpcCall } from "./rpc-counter";
import { localRelayerKey } from "@/lib/allowances/settings";

const PAYMENT = parseEther("0.001");
const MOST = parseGwei("100");
const CALM = parseGwei("1");
/** The OP stack's GasPriceOracle predeploy, and a stand-in's code: getL1Fee answers 1 gwei per byte of its calldata. */
const GAS_PRICE_ORACLE = "0x420000000000000000000000000000000000000F";
const ORACLE_STAND_IN = "0x3664003b9aca00025f5260205ff3";

/** The L1 data fee the stand-in charges for a relayer transaction's signed bytes: its unsigned bytes, weighed. */
function standInL1Fee(raw: Hex): bigint {
  const { r: _r, s: _s, v: _v, yParity: _yParity, ...unsigned } = parseTransaction(raw);
  const call = encodeFunctionData({
    abi: parseAbi(["function getL1Fee(bytes) view returns (uint256)"]),
    functionName: "getL1Fee",
    args: [serializeTransaction(unsigned)],
  });
  return BigInt((call.length - 2) / 2) * parseGwei("1");
}

export function feeSpikeSuite(database: "sqlite" | "postgres") {
  describe(`payments from an allowance through a fee spike (${database}, 2-second blocks)`, { timeout: 600_000 }, () => {
    let world: AllowanceWorld;
    /** Between the app's code and the node: every JSON-RPC call it makes. */
    let proxy: CountingProxy;
    let lib: {
      agent: typeof import("@/lib/allowances/agent");
      clock: typeof import("@/lib/clock");
      db: typeof import("@/lib/db");
      ledger: typeof import("@/lib/allowances/relayer-ledger");
      reconcile: typeof import("@/lib/allowances/reconcile");
      requests: typeof import("@/lib/wallet/request-lifecycle");
      revocation: typeof import("@/lib/allowances/revocation");
      operation: typeof import("@/lib/allowances/revocation-operation");
      unblock: typeof import("@/lib/allowances/unblock");
    };
    let baseFee = CALM;
    let watching: ReturnType<typeof setInterval> | undefined;

    const ask = (method: string, params: unknown[] = []) =>
      world.chain.client.request({ method: method as never, params: params as never });
    const setNextBaseFee = (fee: bigint) => ask("hardhat_setNextBlockBaseFeePerGas", [`0x${fee.toString(16)}`]);

    /** Holds the base fee at `fee` from the next block on, as a spike (or its end) holds it block after block. */
    async function holdBaseFee(fee: bigint) {
      baseFee = fee;
      await setNextBaseFee(fee);
    }

    before(async () => {
      world = await startAllowanceWorld({
        database,
        rpcUrl: async (chain) => {
          proxy = await countingProxy(chain.rpcUrl);
          return proxy.rpcUrl;
        },
        env: {
          ALLOWANCE_MAX_FEE_PER_GAS: JSON.stringify({ 31337: MOST.toString() }),
          ALLOWANCE_REVOCATION_RELAYERS: JSON.stringify({ 31337: localRelayerKey("revocations") }),
        },
        l1Fees: "op-stack",
      });
      await world.chain.client.request({ method: "hardhat_setCode" as never, params: [GAS_PRICE_ORACLE, ORACLE_STAND_IN] as never });
      lib = {
        agent: await import("@/lib/allowances/agent"),
        clock: await import("@/lib/clock"),
        db: await import("@/lib/db"),
        ledger: await import("@/lib/allowances/relayer-ledger"),
        reconcile: await import("@/lib/allowances/reconcile"),
        requests: await import("@/lib/wallet/request-lifecycle"),
        revocation: await import("@/lib/allowances/revocation"),
        operation: await import("@/lib/allowances/revocation-operation"),
        unblock: await import("@/lib/allowances/unblock"),
      };
      await holdBaseFee(CALM);
      await world.chain.mineEvery(2000);
      // Before every block, the base fee the test holds: a block of no transactions would lower it. The block number is
      // asked afresh each time (viem's is kept 4 s, two blocks, one of which would go by at a lower fee).
      const blockNumber = () => world.chain.client.getBlockNumber({ cacheTime: 0 });
      let seen = await blockNumber();
      watching = setInterval(() => {
        void blockNumber().then(
          async (number) => {
            if (number === seen) return;
            seen = number;
            await setNextBaseFee(baseFee);
          },
          () => {},
        );
      }, 100);
    });
    after(async () => {
      clearInterval(watching);
      await proxy?.stop();
      await world?.stop();
    });

    const pendingNonce = () => world.chain.client.getTransactionCount({ address: world.relayer, blockTag: "pending" });
    async function until(condition: () => Promise<boolean>, what: string, ms = 30_000) {
      const deadline = Date.now() + ms;
      while (!(await condition())) {
        if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }

    /**
     * Starts `pay` at calm fees, and the spike at `fee` once its transaction waits in the mempool, before any block mines
     * it. `ahead`: a transaction the relayer's key sends elsewhere first, at the nonce given, in the same block (its hash).
     */
    async function payingIntoSpike(pay: () => Promise<unknown>, fee: bigint, ahead?: (nonce: number) => Promise<Hex>) {
      // the allowance's own set-up mined first: the transaction that waits is the payment's
      await until(async () => (await world.relayerNonce()) === (await pendingNonce()), "nothing of the relayer's waits");
      const nonce = await world.relayerNonce();
      let paying!: Promise<unknown>;
      let elsewhere: Hex | undefined;
      await world.chain.holdingBlocks(async () => {
        elsewhere = await ahead?.(nonce);
        paying = pay();
        paying.catch(() => {});
        await until(async () => (await pendingNonce()) > nonce + (elsewhere ? 1 : 0), "the payment waits in the mempool");
        await holdBaseFee(fee);
      });
      return { nonce, paying, elsewhere };
    }

    /** The relayer's ledger rows of its transactions at `nonce`: the first of the nonce and its replacements. */
    const rowsAt = (nonce: number) =>
      lib.db.db().relayedTransaction.findMany({ where: { relayer: world.relayer, nonce }, orderBy: { createdAt: "asc" } });

    it("a payment that fees left behind is replaced at a higher fee and lands during the spike: only what landed is paid", async () => {
      const { pay, shop, userId } = await agentPayingShop(world, PAYMENT);
      const before = await lib.ledger.gasSpentFor(userId, world.chain.chainId);
      const { nonce, paying } = await payingIntoSpike(pay, parseGwei("50"));
      const paid = (await paying) as { status: string; tx_hash: Hex; request_id: string };
      await holdBaseFee(CALM);
      assert.equal(paid.status, "completed");
      const receipt = await world.chain.client.getTransactionReceipt({ hash: paid.tx_hash });
      assert.equal(receipt.status, "success");
      const block = await world.chain.client.getBlock({ blockNumber: receipt.blockNumber });
      const ledger = (await rowsAt(nonce)).map((row) => `${row.hash.slice(0, 10)} ${row.status}`).join(", ");
      assert.ok(
        receipt.effectiveGasPrice >= parseGwei("50"),
        `mined at the spike's fees: paid ${receipt.effectiveGasPrice} a gas in a block of base fee ${block.baseFeePerGas}; ${ledger}`,
      );
      assert.equal(await world.relayerNonce(), nonce + 1);
      assert.equal(await world.balance(shop), PAYMENT);
      const rows = await rowsAt(nonce);
      assert.ok(rows.length >= 2, `replaced at a higher fee: ${rows.length} transaction(s) of the nonce`);
      assert.deepEqual(
        rows.map((row) => [row.hash === paid.tx_hash ? "mined" : "other", row.status, row.lineage]),
        rows.map((row) => [row.hash === paid.tx_hash ? "mined" : "other", row.hash === paid.tx_hash ? "landed" : "replaced", rows[0].hash]),
        "one lineage: the mined one landed, the others replaced (never refused)",
      );
      assert.ok(rows.every((row) => row.hash === paid.tx_hash || (row.cost === 0n && row.gasUsed === 0)));
      // what names the payment names the mined transaction
      const spend = await lib.db.db().allowanceSpend.findFirstOrThrow({ where: { txHash: paid.tx_hash } });
      assert.equal(spend.status, "landed");
      const request = await lib.db.db().agentRequest.findUniqueOrThrow({ where: { id: paid.request_id } });
      assert.equal(request.txHash, paid.tx_hash);
      const completed = await lib.db.db().auditEvent.findMany({ where: { requestId: paid.request_id } });
      assert.ok(
        completed.some((event) => event.data.includes(paid.tx_hash) && event.data.includes('"completed"')),
        "the audit log names the mined transaction",
      );
      // the person's budget counts the coin the mined one cost with its L1 data fee, and nothing of the replaced
      const mined = rows.find((row) => row.hash === paid.tx_hash)!;
      const l1Fee = standInL1Fee(mined.raw as Hex);
      assert.equal(mined.l1Fee, l1Fee.toString(), "the L1 data fee the chain's oracle charges");
      assert.equal(mined.feePaid, (receipt.gasUsed * receipt.effectiveGasPrice + l1Fee).toString());
      const spent = await lib.ledger.gasSpentFor(userId, world.chain.chainId);
      assert.equal(spent.coin - before.coin, receipt.gasUsed * receipt.effectiveGasPrice + l1Fee);
      assert.equal(spent.gas - before.gas, receipt.gasUsed);
    });

    it("while the base fee is above the operator's most, a payment is refused saying so, nothing sent and nothing counted", async () => {
      const { pay, userId } = await agentPayingShop(world, PAYMENT);
      await holdBaseFee(parseGwei("150"));
      try {
        await until(async () => (await world.chain.client.getBlock()).baseFeePerGas! >= parseGwei("150"), "the spike");
        const nonce = await pendingNonce();
        const rows = await lib.db.db().relayedTransaction.count();
        const before = await lib.ledger.gasSpentFor(userId, world.chain.chainId);
        await assert.rejects(pay(), (error: Error) => {
          assert.match(error.message, /above the most the relayer pays \(100 gwei per gas; the base fee is 150 gwei/);
          return true;
        });
        assert.equal(await pendingNonce(), nonce, "nothing sent");
        assert.equal(await lib.db.db().relayedTransaction.count(), rows, "nothing in the ledger");
        assert.deepEqual(await lib.ledger.gasSpentFor(userId, world.chain.chainId), before, "nothing counted");
      } finally {
        await holdBaseFee(CALM);
      }
    });

    it("a spike above the most, longer than the agent waits: submitted, replaced once at the most, landed and settled after", async () => {
      const { pay, shop, userId } = await agentPayingShop(world, PAYMENT);
      const before = await lib.ledger.gasSpentFor(userId, world.chain.chainId);
      const started = Date.now();
      const { nonce, paying } = await payingIntoSpike(pay, parseGwei("150"));
      let paid: { status: string; tx_hash: Hex; request_id: string };
      try {
        paid = (await paying) as typeof paid;
        assert.equal(paid.status, "submitted", "not mined within the minute the agent waits");
        assert.equal(await world.relayerNonce(), nonce, "nothing mined during the spike");
        const rows = await rowsAt(nonce);
        assert.deepEqual(
          rows.map((row) => row.status),
          ["replaced", "sent"],
          "replaced once, at the most; no send the node refused",
        );
        const waiting = rows[1];
        assert.equal(paid.tx_hash, waiting.hash, "the agent hears of the transaction that may land");
        assert.equal(
          waiting.cost,
          BigInt(waiting.gasLimit) * MOST + standInL1Fee(waiting.raw as Hex),
          "the budget holds its gas limit at the most, and its L1 data fee",
        );
        // the spike lasts 75 s in all
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, 75_000 - (Date.now() - started))));
      } finally {
        await holdBaseFee(CALM);
      }
      await until(async () => (await world.relayerNonce()) > nonce, "mined once the spike ends");
      await lib.reconcile.reconcilePayments();
      const request = await lib.requests.currentRequest(await lib.requests.reloadRequest(paid.request_id));
      assert.equal(request.status, "completed");
      const receipt = await world.chain.client.getTransactionReceipt({ hash: request.txHash as Hex });
      assert.equal(receipt.status, "success");
      assert.equal(request.txHash, paid.tx_hash);
      assert.equal(await world.balance(shop), PAYMENT);
      const spend = await lib.db.db().allowanceSpend.findFirstOrThrow({ where: { txHash: receipt.transactionHash } });
      assert.equal(spend.status, "landed");
      const spent = await lib.ledger.gasSpentFor(userId, world.chain.chainId);
      const l1Fee = standInL1Fee((await rowsAt(nonce)).find((row) => row.hash === receipt.transactionHash)!.raw as Hex);
      assert.equal(spent.coin - before.coin, receipt.gasUsed * receipt.effectiveGasPrice + l1Fee, "the budget counts what it paid");
    });

    it("a revocation is not held behind a payment that waits: it has a relayer of its own, and pays past the most", async () => {
      const { pay, person, userId, credentialId } = await agentPayingShop(world, PAYMENT);
      const other = await signAllowanceFor(world.chain, person, { userId, credentialId }, { recipients: [world.recipient()] });
      // A payment left behind by a spike above the operator's most: it waits, and any payment after it would too.
      const { nonce, paying } = await payingIntoSpike(pay, parseGwei("150"));
      try {
        const prepared = await lib.revocation.prepareRevocation(userId, [other.id]);
        const signature = await lib.operation.signRevocation(person, prepared);
        const { txHash } = await lib.revocation.revokeAllowances(userId, [other.id], { nonce: prepared.nonce, signature });
        assert.ok(txHash);
        const revoked = await world.chain.client.getTransactionReceipt({ hash: txHash });
        assert.equal(revoked.status, "success");
        assert.ok(revoked.effectiveGasPrice > MOST, "a revocation pays the day's fees, past the most payments are held to");
        assert.deepEqual(
          await world.disabledOnChain(other.hashes),
          other.hashes.map(() => true),
        );
        assert.equal(await world.relayerNonce(), nonce, "the payment still waits");
      } finally {
        // The spike ends: the payment is mined.
        await holdBaseFee(CALM);
      }
      const paid = (await paying) as { status: string };
      assert.equal(paid.status, "completed");
    });

    it("ten payments waiting together through a spike are replaced and land; the chain is read once a block, not per payment", async () => {
      const agents: Awaited<ReturnType<typeof agentPayingShop>>[] = [];
      for (let count = 0; count < 10; count++) agents.push(await agentPayingShop(world, PAYMENT));
      await until(async () => (await world.relayerNonce()) === (await pendingNonce()), "nothing of the relayer's waits");
      const nonce = await world.relayerNonce();
      const from = proxy.calls.length;
      const started = Date.now();
      let paying!: Promise<{ status: string; tx_hash: Hex }>[];
      await world.chain.holdingBlocks(async () => {
        paying = agents.map(({ pay }) => pay() as Promise<{ status: string; tx_hash: Hex }>);
        for (const payment of paying) payment.catch(() => {});
        await until(async () => (await pendingNonce()) === nonce + agents.length, "the ten wait in the mempool", 60_000);
        await holdBaseFee(parseGwei("50"));
      });
      let paid;
      try {
        paid = await Promise.all(paying);
      } finally {
        await holdBaseFee(CALM);
      }
      const waitedMs = Date.now() - started;
      const calls = proxy.calls.slice(from);
      // what the agents and the shops see: every receipt came, every payment was replaced into the spike and landed
      assert.deepEqual(
        paid.map((payment) => payment.status),
        agents.map(() => "completed"),
      );
      for (const { shop } of agents) assert.equal(await world.balance(shop), PAYMENT);
      assert.equal(await world.relayerNonce(), nonce + agents.length);
      for (let index = 0; index < agents.length; index++) {
        const rows = await rowsAt(nonce + index);
        assert.ok(rows.length >= 2, `the payment of nonce ${nonce + index} was replaced at a higher fee: ${rows.length} transaction(s)`);
        assert.equal(rows.filter((row) => row.status === "landed").length, 1);
      }
      // what it cost in calls to the node
      const named = (method: string, test: (call: RpcCall) => boolean = () => true) =>
        calls.filter((call) => call.method === method && test(call));
      const receipts = named("eth_getTransactionReceipt").length;
      assert.ok(
        receipts <= 3 * agents.length,
        `${receipts} receipts asked for ${agents.length} payments: one right after each send, one once its block was read`,
      );
      const blockReads = named("eth_getBlockByNumber", (call) => /^0x[0-9a-f]+$/.test(String(call.params?.[0]))).map((call) =>
        String(call.params?.[0]),
      );
      assert.ok(blockReads.length > 0, "the watcher read the blocks");
      assert.equal(new Set(blockReads).size, blockReads.length, `every block read once: ${blockReads.join(" ")}`);
      // the watcher's, one a block for every waiting payment; and each send's own, behind the relayer's waiting transactions
      const minedCounts = named("eth_getTransactionCount", (call) => call.params?.[1] === "latest").length;
      const blocks = Math.ceil(waitedMs / 2000) + 2;
      assert.ok(
        minedCounts <= blocks + agents.length,
        `${minedCounts} asks of the relayer's mined nonce in ${waitedMs} ms: one a block, shared, and one a send`,
      );
      const heads = named("eth_blockNumber").length;
      assert.ok(heads <= waitedMs / 250 + 5, `${heads} asks of the block number in ${waitedMs} ms: about one each 250 ms, for all`);
    });

    it("a nonce held by another sender's transaction is taken with a no-op on the second look: the payment behind it lands", async () => {
      const { pay, shop, userId } = await agentPayingShop(world, PAYMENT);
      const before = await lib.ledger.gasSpentFor(userId, world.chain.chainId);
      // The relayer's key used elsewhere: a transfer of its own straight to the node at the base fee, which then rises by
      // 15 %: it waits in the pool, where the payment after it still offers enough to be mined.
      const recipient = world.recipient();
      const relayerKey = privateKeyToAccount(localRelayerKey());
      const sentElsewhere = async (nonce: number) =>
        (await ask("eth_sendRawTransaction", [
          await relayerKey.signTransaction({
            type: "eip1559",
            chainId: world.chain.chainId,
            nonce,
            to: recipient,
            value: 1n,
            gas: 21_000n,
            maxFeePerGas: CALM,
            maxPriorityFeePerGas: parseGwei("0.01"),
          }),
        ])) as Hex;
      const warned: string[] = [];
      const warn = mock.method(console, "warn", (line: string) => void warned.push(line));
      let paid: { status: string; tx_hash: Hex; request_id: string };
      let nonce: number;
      let elsewhere: Hex;
      try {
        const started = await payingIntoSpike(pay, parseGwei("1.15"), sentElsewhere);
        ({ nonce } = started);
        elsewhere = started.elsewhere!;
        await lib.reconcile.reconcilePayments();
        const firstLook = Date.now();
        assert.deepEqual(await rowsAt(nonce), [], "nothing sent at the held nonce on the first look");
        const block = await world.chain.client.getBlockNumber();
        await until(async () => (await world.chain.client.getBlockNumber()) >= block + 2n, "two more blocks");
        assert.equal(await world.relayerNonce(), nonce, "the payment queued behind it: nothing of the relayer's mined");
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, firstLook + lib.unblock.HELD_FOR_MS - Date.now())));
        await lib.reconcile.reconcilePayments();
        paid = (await started.paying) as typeof paid;
      } finally {
        warn.mock.restore();
        await holdBaseFee(CALM);
      }
      // what the agent and the shop see: the payment landed within the minute the agent waits, once
      assert.equal(paid.status, "completed");
      const receipt = await world.chain.client.getTransactionReceipt({ hash: paid.tx_hash });
      assert.equal(receipt.status, "success");
      assert.equal(await world.balance(shop), PAYMENT);
      assert.equal(await world.relayerNonce(), nonce + 2, "the no-op, then the payment");
      // the other sender's transaction never mined: replaced by a no-op of the relayer's to itself
      await assert.rejects(world.chain.client.getTransactionReceipt({ hash: elsewhere }));
      assert.equal(await world.balance(recipient), 0n);
      await lib.reconcile.reconcilePayments();
      const atNonce = await rowsAt(nonce);
      assert.equal(atNonce.length, 1, "one no-op at the held nonce");
      const [noOp] = atNonce;
      assert.deepEqual(
        { purpose: noOp.purpose, status: noOp.status, userId: noOp.userId, allowanceId: noOp.allowanceId },
        { purpose: "unblock", status: "landed", userId: null, allowanceId: null },
        "in the ledger, charged to no one, its receipt recorded",
      );
      const mined = await world.chain.client.getTransaction({ hash: noOp.hash as Hex });
      assert.deepEqual(
        [mined.nonce, mined.to?.toLowerCase(), mined.value, mined.gas, mined.input],
        [nonce, world.relayer.toLowerCase(), 0n, 21_000n, "0x"],
        "nothing, to the relayer itself",
      );
      // what names the payment says it landed; the person's budget counts the payment alone
      const spend = await lib.db.db().allowanceSpend.findFirstOrThrow({ where: { txHash: paid.tx_hash } });
      assert.equal(spend.status, "landed");
      const request = await lib.db.db().agentRequest.findUniqueOrThrow({ where: { id: paid.request_id } });
      assert.equal(request.status, "completed");
      const [payment] = await rowsAt(nonce + 1);
      const spent = await lib.ledger.gasSpentFor(userId, world.chain.chainId);
      assert.equal(spent.coin - before.coin, receipt.gasUsed * receipt.effectiveGasPrice + standInL1Fee(payment.raw as Hex));
      assert.equal(spent.gas - before.gas, receipt.gasUsed);
      // what the operator reads: one line naming the relayer and the nonce, nothing of the RPC's address
      const said = warned.filter((line) => line.includes("no-op"));
      assert.equal(said.length, 1, said.join("\n"));
      assert.ok(said[0].includes(world.relayer) && said[0].includes(`nonce ${nonce} `) && said[0].includes("did not send"), said[0]);
      assert.ok(!said[0].includes(proxy.rpcUrl) && !said[0].includes(world.chain.rpcUrl), said[0]);
    });

    /** A transfer of 1 wei the relayer's `key` signs elsewhere at `nonce`, sent straight to the node (its hash). */
    const sentElsewhereWith = async (key: Hex, nonce: number, to: Hex, fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }) =>
      (await ask("eth_sendRawTransaction", [
        await privateKeyToAccount(key).signTransaction({
          type: "eip1559",
          chainId: world.chain.chainId,
          nonce,
          to,
          value: 1n,
          gas: 21_000n,
          ...fees,
        }),
      ])) as Hex;

    /** An agent paying a shop, once nothing of the relayer's waits: the nonce its payment will take, and a fresh recipient. */
    async function payingNext() {
      const { pay, shop } = await agentPayingShop(world, PAYMENT);
      await until(async () => (await world.relayerNonce()) === (await pendingNonce()), "nothing of the relayer's waits");
      return { pay, shop, nonce: await world.relayerNonce(), recipient: world.recipient() };
    }

    it("a payment whose nonce another sender's transaction took in the pool at a higher fee is replaced over it and lands", async () => {
      const { pay, shop, nonce, recipient } = await payingNext();
      let paying!: Promise<unknown>;
      let elsewhere!: Hex;
      await world.chain.holdingBlocks(async () => {
        paying = pay();
        paying.catch(() => {});
        await until(async () => (await pendingNonce()) > nonce, "the payment waits in the mempool");
        // The relayer's key used elsewhere at the payment's nonce, at about ten times its fees: the node's pool holds it in
        // the payment's place. The spike then leaves both behind, and a replacement at the spike's fees with the usual
        // tip does not outbid it.
        elsewhere = await sentElsewhereWith(localRelayerKey(), nonce, recipient, {
          maxFeePerGas: parseGwei("10"),
          maxPriorityFeePerGas: parseGwei("10"),
        });
        await holdBaseFee(parseGwei("50"));
      });
      let paid: { status: string; tx_hash: Hex };
      try {
        paid = (await paying) as typeof paid;
      } finally {
        await holdBaseFee(CALM);
      }
      const rows = await rowsAt(nonce);
      const ledger = rows.map((row) => `${row.hash.slice(0, 10)} ${row.status}`).join(", ");
      assert.equal(paid.status, "completed", `landed during the spike: ${ledger}`);
      const mined = await world.chain.client.getTransaction({ hash: paid.tx_hash });
      assert.equal(mined.nonce, nonce);
      assert.ok(mined.maxPriorityFeePerGas! >= parseGwei("11"), "it outbid the other by the node's 10 %");
      assert.ok(mined.maxFeePerGas! <= MOST, "within the operator's most");
      assert.equal(await world.balance(shop), PAYMENT);
      await assert.rejects(world.chain.client.getTransactionReceipt({ hash: elsewhere }), "the other sender's transaction never mined");
      assert.equal(await world.balance(recipient), 0n);
      assert.ok(
        rows.some((row) => row.status === "dropped"),
        `the node refused replacements below the other first: ${ledger}`,
      );
      assert.equal(rows.filter((row) => row.status === "landed").length, 1, ledger);
      assert.ok(
        rows.every((row) => row.status === "landed" || row.cost === 0n),
        "what the node refused or replaced cost nothing",
      );
    });

    it("reconciliation outbids another sender's transaction that took a waiting payment's place in the pool: it lands", async () => {
      const { pay, shop, nonce, recipient } = await payingNext();
      let paying!: Promise<unknown>;
      let elsewhere!: Hex;
      let first!: Hex;
      const looks: string[] = [];
      // No block comes while it is held: the payment's own wait, which replaces once a block, does nothing, and what
      // takes the nonce back is reconciliation alone, whose broadcast of the stored bytes the node refuses.
      await world.chain.holdingBlocks(async () => {
        paying = pay();
        paying.catch(() => {});
        await until(async () => (await pendingNonce()) > nonce, "the payment waits in the mempool");
        [{ hash: first }] = (await rowsAt(nonce)) as { hash: Hex }[];
        elsewhere = await sentElsewhereWith(localRelayerKey(), nonce, recipient, {
          maxFeePerGas: parseGwei("10"),
          maxPriorityFeePerGas: parseGwei("10"),
        });
        await assert.rejects(world.chain.client.getTransaction({ hash: first }), "the other took the payment's place in the pool");
        const ours = async () => {
          const waiting = (await rowsAt(nonce)).filter((row) => row.status === "sent" && row.hash !== first);
          return (await Promise.all(waiting.map((row) => world.chain.client.getTransaction({ hash: row.hash as Hex }).catch(() => null))))
            .filter(Boolean)
            .map((known) => known!.hash);
        };
        for (let look = 1; look <= 8 && !(await ours()).length; look++) {
          await lib.reconcile.reconcilePayments();
          looks.push((await rowsAt(nonce)).map((row) => `${row.hash.slice(0, 10)} ${row.status}`).join(", "));
        }
        assert.equal((await ours()).length, 1, `a replacement of the payment holds its nonce in the pool: ${looks.join(" | ")}`);
      });
      const paid = (await paying) as { status: string; tx_hash: Hex };
      const rows = await rowsAt(nonce);
      const ledger = rows.map((row) => `${row.hash.slice(0, 10)} ${row.status}`).join(", ");
      assert.equal(paid.status, "completed", ledger);
      assert.notEqual(paid.tx_hash, first, "what landed is the replacement");
      const mined = await world.chain.client.getTransaction({ hash: paid.tx_hash });
      assert.equal(mined.nonce, nonce);
      assert.ok(mined.maxPriorityFeePerGas! > parseGwei("10"), "it outbid the other");
      assert.ok(mined.maxFeePerGas! <= MOST, "within the operator's most");
      assert.equal(await world.balance(shop), PAYMENT);
      await assert.rejects(world.chain.client.getTransactionReceipt({ hash: elsewhere }), "the other sender's transaction never mined");
      assert.equal(await world.balance(recipient), 0n);
      assert.equal(rows.filter((row) => row.status === "landed").length, 1, ledger);
      assert.ok(
        rows.every((row) => row.status === "landed" || row.cost === 0n),
        `what the node refused or replaced cost nothing: ${ledger}`,
      );
    });

    it("a revocation relayer's nonce held by another sender's transaction at the operator's most is taken past the most", async () => {
      const { person, userId, credentialId } = await agentPayingShop(world, PAYMENT);
      const other = await signAllowanceFor(world.chain, person, { userId, credentialId }, { recipients: [world.recipient()] });
      const revocationsKey = localRelayerKey("revocations");
      const revoker = privateKeyToAccount(revocationsKey).address;
      const recipient = world.recipient();
      const minedCount = () => world.chain.client.getTransactionCount({ address: revoker, blockTag: "latest" });
      const pendingCount = () => world.chain.client.getTransactionCount({ address: revoker, blockTag: "pending" });
      await until(async () => (await minedCount()) === (await pendingCount()), "nothing of the revocation relayer's waits");
      const nonce = await minedCount();
      const prepared = await lib.revocation.prepareRevocation(userId, [other.id]);
      const signature = await lib.operation.signRevocation(person, prepared);
      const warn = mock.method(console, "warn", () => {});
      let revoking!: Promise<{ txHash: Hex | null }>;
      let elsewhere!: Hex;
      try {
        // The key of revocations used elsewhere at the operator's most, the revocation queued after it; then a spike
        // above the most leaves it behind, and no no-op held to that most outbids it.
        await world.chain.holdingBlocks(async () => {
          elsewhere = await sentElsewhereWith(revocationsKey, nonce, recipient, {
            maxFeePerGas: MOST,
            maxPriorityFeePerGas: parseGwei("0.01"),
          });
          revoking = lib.revocation.revokeAllowances(userId, [other.id], { nonce: prepared.nonce, signature });
          revoking.catch(() => {});
          const behind = () => lib.db.db().relayedTransaction.count({ where: { relayer: revoker, nonce: nonce + 1, status: "sent" } });
          await until(async () => (await behind()) > 0, "the revocation waits behind the other");
          await holdBaseFee(parseGwei("150"));
        });
        await until(async () => (await world.chain.client.getBlock()).baseFeePerGas! >= parseGwei("150"), "the spike");
        await lib.reconcile.reconcilePayments();
        const firstLook = Date.now();
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, firstLook + lib.unblock.HELD_FOR_MS - Date.now())));
        await lib.reconcile.reconcilePayments();
        await until(async () => (await minedCount()) > nonce, "the held nonce taken during the spike", 10_000);
        const noOps = await lib.db.db().relayedTransaction.findMany({ where: { relayer: revoker, nonce } });
        const noOp = noOps.find((row) => row.purpose === "unblock" && row.status !== "dropped");
        assert.ok(noOp, `a no-op took the nonce: ${noOps.map((row) => `${row.purpose} ${row.status}`).join(", ")}`);
        const mined = await world.chain.client.getTransaction({ hash: noOp.hash as Hex });
        assert.ok(mined.maxFeePerGas! > MOST, "past the most payments are held to, as a revocation pays");
      } finally {
        warn.mock.restore();
        // The spike ends: the revocation, signed before it, is mined.
        await holdBaseFee(CALM);
      }
      await assert.rejects(world.chain.client.getTransactionReceipt({ hash: elsewhere }), "the other sender's transaction never mined");
      assert.equal(await world.balance(recipient), 0n);
      const { txHash } = await revoking;
      assert.ok(txHash);
      const revoked = await world.chain.client.getTransactionReceipt({ hash: txHash });
      assert.equal(revoked.status, "success");
      assert.deepEqual(
        await world.disabledOnChain(other.hashes),
        other.hashes.map(() => true),
      );
    });
  });
}
