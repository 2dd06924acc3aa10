// An agent paying from an allowance through a provider that fails as hosted ones do (issue 55, "providers as they
// are"), on a chain that mines a block every 2 seconds with a mempool, on SQLite (e2e/allowances/flaky-provider.test.ts)
// and on PostgreSQL (e2e/postgres/flaky-provider.test.ts): one suite per test file, as a process holds one database
// client. A real hardhat node behind a real proxy (fault-proxy) that answers 429 with Retry-After after the node took
// the broadcast, 429 and 503 on reads, passes on a broadcast the node already holds, and lags on the relayer's pending
// nonce so that the node itself refuses the relayer's transaction as underpriced. And a node that drops the relayer's
// transaction from its pool (issue 55, finding 3): reconciliation broadcasts it again, or, once another transaction
// took its nonce, says so everywhere. The cases that need a transaction to wait in the pool hold the blocks for that
// step only (holdingBlocks); the rest of each, the payment landing with it, happens on 2-second blocks. The faults
// that reach the relayer's broadcast are run for a payment from Agent Wallet's key and for one the agent's own key
// signed (send_allowance_payment's leaf), which the relayer sends the same way.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createWalletClient, http, parseEther, parseGwei, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { agentPayingShop as payingShop, agentSigningForShop, type AllowanceWorld } from "./allowances";
import { chainDefinition } from "./chain";
import type { FaultProxy, ProxiedCall } from "./fault-proxy";
import { startFaultyWorld } from "./faulty-world";
import type { RequestView } from "@/contract";

const PAYMENT = parseEther("0.001");

/** Whose key signs the payment: the faults that reach the relayer's broadcast are run for each. */
type Payer = { whose: string; shop: typeof payingShop | typeof agentSigningForShop };
const PAYERS: Payer[] = [
  { whose: "Agent Wallet's key", shop: payingShop },
  { whose: "the agent's own key (send_allowance_payment)", shop: agentSigningForShop },
];

export function flakyProviderSuite(database: "sqlite" | "postgres") {
  describe(`payments from an allowance through a flaky provider (${database}, 2-second blocks)`, { timeout: 300_000 }, () => {
    let world: AllowanceWorld;
    let proxy: FaultProxy;
    let stop: (() => Promise<void>) | undefined;
    let lib: {
      agent: typeof import("@/lib/allowances/agent");
      clock: typeof import("@/lib/clock");
      db: typeof import("@/lib/db");
      settings: typeof import("@/lib/allowances/settings");
      reconcile: typeof import("@/lib/allowances/reconcile");
    };

    before(async () => {
      ({ world, proxy, stop } = await startFaultyWorld(database));
      lib = {
        agent: await import("@/lib/allowances/agent"),
        clock: await import("@/lib/clock"),
        db: await import("@/lib/db"),
        settings: await import("@/lib/allowances/settings"),
        reconcile: await import("@/lib/allowances/reconcile"),
      };
    });
    after(() => stop?.());

    /**
     * An agent of a person of their own, with an allowance of 0.01 ETH a day to a shop: `pay` sends it 0.001 ETH, from
     * Agent Wallet's key (send_transaction) unless `payer` says the agent's own key signs it (send_allowance_payment).
     */
    async function agentPayingShop(payer: Payer = PAYERS[0]) {
      const { shop, pay, grantId } = await payer.shop(world, PAYMENT);
      const paying = async () => {
        const paid = await pay();
        assert.ok("request_id" in paid, JSON.stringify(paid));
        return paid;
      };
      return { shop, pay: paying, grantId };
    }

    /**
     * A payment the agent's key signed, sent again with its idempotency key (its answer lost, say): answered the first
     * payment's request as it ended (`status`), with nothing more sent or paid. Agent Wallet's key has no such call here.
     */
    async function sentAgainAnswersTheFirst(
      paid: { request_id: string; again?: () => Promise<RequestView> },
      status: string,
      shop: Address,
    ) {
      if (!paid.again) return;
      const [nonce, balance] = [await world.relayerNonce(), await world.balance(shop)];
      const { txHash } = await lib.db.db().agentRequest.findUniqueOrThrow({ where: { id: paid.request_id } });
      const again = await paid.again();
      assert.deepEqual([again.request_id, again.status, again.tx_hash], [paid.request_id, status, txHash]);
      assert.equal(await world.relayerNonce(), nonce, "nothing more was sent");
      assert.equal(await world.balance(shop), balance, "nor paid");
    }

    /** The relayer's key as a wallet that sends on the node itself. */
    const relayerWallet = () =>
      createWalletClient({
        account: privateKeyToAccount(lib.settings.localRelayerKey()),
        chain: chainDefinition(world.chain),
        transport: http(world.chain.rpcUrl),
      });

    /** The requests the proxy got from `from` on, as their methods. */
    const methodsFrom = (from: number) => proxy.seen.slice(from).map((request) => request.methods);
    const sends = (from: number) =>
      methodsFrom(from)
        .flat()
        .filter((method) => method === "eth_sendRawTransaction").length;
    const broadcast = (calls: ProxiedCall[]) => calls.some((call) => call.method === "eth_sendRawTransaction");

    for (const payer of PAYERS)
      it(`a 429 answering the broadcast's batch after the node took it: paid once, batching still on (${payer.whose})`, async () => {
        const { shop, pay } = await agentPayingShop(payer);
        const nonce = await world.relayerNonce();
        const from = proxy.seen.length;
        let answered429 = false;
        proxy.fault = (calls) => {
          if (answered429 || !broadcast(calls) || calls.length < 2) return;
          answered429 = true;
          return { status: 429, retryAfter: "1", forwarded: true };
        };
        const paid = await pay().finally(() => (proxy.fault = undefined));
        assert.ok(answered429, "the broadcast went out in a batch, answered 429");
        assert.equal(paid.status, "completed");
        assert.equal(sends(from), 1, "the broadcast was sent once");
        assert.equal(await world.relayerNonce(), nonce + 1, "one transaction on chain");
        assert.equal(await world.balance(shop), PAYMENT);
        const receipt = await world.chain.client.getTransactionReceipt({ hash: paid.tx_hash as Hex });
        assert.equal(receipt.status, "success");
        await sentAgainAnswersTheFirst(paid, "completed", shop);
        // the next payment's calls still go out together
        const next = proxy.seen.length;
        assert.equal((await pay()).status, "completed");
        assert.ok(
          methodsFrom(next).some((methods) => methods.length > 1),
          JSON.stringify(methodsFrom(next)),
        );
        assert.equal(await world.balance(shop), 2n * PAYMENT);
      });

    for (const payer of PAYERS)
      it(`reads answered 429 are asked again, the same batch, after its Retry-After; the payment completes (${payer.whose})`, async () => {
        const { pay } = await agentPayingShop(payer);
        let limited: number | undefined;
        proxy.fault = (calls) => {
          if (limited !== undefined || calls.length < 2 || broadcast(calls)) return;
          limited = proxy.seen.length - 1;
          return { status: 429, retryAfter: "1" };
        };
        const paid = await pay().finally(() => (proxy.fault = undefined));
        assert.equal(paid.status, "completed");
        assert.ok(limited !== undefined, "a batch of reads was answered 429");
        const first = proxy.seen[limited];
        const again = proxy.seen.slice(limited + 1).find((request) => request.methods.join() === first.methods.join());
        assert.ok(again, `the batch ${first.methods.join()} was asked again whole: ${JSON.stringify(methodsFrom(limited))}`);
        assert.ok(again.at - first.at >= 990, `asked again after ${again.at - first.at} ms, not the 1 s Retry-After says`);
      });

    for (const payer of PAYERS)
      it(`reads answered 503 twice are asked again with a growing wait, and the payment completes (${payer.whose})`, async () => {
        const { pay } = await agentPayingShop(payer);
        let failing: string | undefined;
        let failures = 0;
        proxy.fault = (calls) => {
          const methods = calls.map((call) => call.method).join();
          if (broadcast(calls) || !calls.some((call) => call.method === "eth_getBalance")) return;
          if (failing === undefined) failing = methods;
          if (methods !== failing || failures >= 2) return;
          failures++;
          return { status: 503 };
        };
        const from = proxy.seen.length;
        const paid = await pay().finally(() => (proxy.fault = undefined));
        assert.equal(paid.status, "completed");
        const attempts = proxy.seen.slice(from).filter((request) => request.methods.join() === failing);
        assert.equal(attempts.length, 3, `${failing}: answered 503, 503, then by the node`);
        assert.ok(attempts[1].at - attempts[0].at >= 240 && attempts[2].at - attempts[1].at >= 490, JSON.stringify(attempts));
      });

    it("a node that already holds the relayer's transaction says so ('Known transaction'): it was sent, and is paid once", async () => {
      const { pay, shop } = await agentPayingShop();
      const nonce = await world.relayerNonce();
      let known = false;
      let answered!: () => void;
      const nodeAnswered = new Promise<void>((resolve) => (answered = resolve));
      proxy.before = async (calls) => {
        const broadcast = calls.find((call) => call.method === "eth_sendRawTransaction");
        if (!known && broadcast) {
          known = true;
          // the same bytes reach the node first by another way (the provider's other node, an earlier try)
          await world.chain.client.request({ method: "eth_sendRawTransaction", params: broadcast.params as [Hex] });
        } else if (known) answered(); // the node has answered the broadcast: the payment asks what comes next
      };
      try {
        // No block until the node has answered the relayer's broadcast: the bytes it got first still wait in its pool.
        const { paying } = await world.chain.holdingBlocks(async () => {
          const paying = pay();
          await Promise.race([nodeAnswered, paying]);
          return { paying };
        });
        const paid = await paying;
        assert.ok(known, "the node held the transaction when the relayer's broadcast reached it");
        assert.equal(paid.status, "completed");
      } finally {
        proxy.before = undefined;
      }
      assert.equal(await world.relayerNonce(), nonce + 1);
      assert.equal(await world.balance(shop), PAYMENT);
    });

    it("the node's own words reach the agent when it refuses the relayer's transaction (replacement underpriced)", async () => {
      const { pay, shop, grantId } = await agentPayingShop();
      const relayer = world.relayer as Address;
      // No block while the relayer pays: the transaction that took its nonce waits in the node's pool meanwhile.
      const error = await world.chain
        .holdingBlocks(async () => {
          // The relayer's next nonce taken by a transaction paying a higher tip, waiting in the node's pool; the provider's
          // node lags and counts only the relayer's mined transactions, so the relayer signs that nonce again, for less.
          await relayerWallet().sendTransaction({
            to: relayer,
            value: 0n,
            maxFeePerGas: parseGwei("500"),
            maxPriorityFeePerGas: parseGwei("100"),
          });
          proxy.rewrite = (call) =>
            call.method === "eth_getTransactionCount" && call.params?.[1] === "pending"
              ? { ...call, params: [call.params[0], "latest"] }
              : call;
          return pay().then(
            () => assert.fail("the payment was not refused"),
            (caught: unknown) => caught as Error,
          );
        })
        .finally(() => (proxy.rewrite = undefined));
      assert.match(error.message, /Replacement transaction underpriced/);
      assert.doesNotMatch(error.message, /Missing or invalid parameters|127\.0\.0\.1|http:/);
      assert.match(error.message, /nothing was paid/);
      const [request] = await lib.db.db().agentRequest.findMany({ where: { grantId } });
      assert.equal(request.status, "failed");
      assert.match(request.reason ?? "", /Replacement transaction underpriced/);
      assert.equal(await world.balance(shop), 0n);
    });

    /**
     * Pays while the node mines nothing, and answers the payment's transaction once it waits in the node's pool, where
     * the payment waits for its receipt: then the node drops it (hardhat_dropTransaction), as a busy node's pool does.
     */
    async function droppedWhilePaying<Paid extends { status: string }>(pay: () => Promise<Paid>, grantId: string, nonce: number) {
      const paying = pay();
      const deadline = Date.now() + 30_000;
      let hash: Hex | null = null;
      while (!hash) {
        assert.ok(Date.now() < deadline, "the payment's transaction reached the node's pool");
        const [request] = await lib.db.db().agentRequest.findMany({ where: { grantId } });
        const pooled = await world.chain.client.getTransactionCount({ address: world.relayer, blockTag: "pending" });
        if (request?.txHash && pooled > nonce) hash = request.txHash as Hex;
        else await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // the payment's wait has looked the transaction up by then
      await new Promise((resolve) => setTimeout(resolve, 500));
      const dropped = await world.chain.client.request({ method: "hardhat_dropTransaction" as never, params: [hash] as never });
      assert.equal(dropped, true);
      return { paying, hash };
    }

    const spendOf = (txHash: Hex) => lib.db.db().allowanceSpend.findFirstOrThrow({ where: { txHash } });
    const requestOf = async (grantId: string) => (await lib.db.db().agentRequest.findMany({ where: { grantId } }))[0];
    /** The request's audited moves, each [from, to]. */
    const movesOf = async (requestId: string) =>
      (await lib.db.db().auditEvent.findMany({ where: { type: "request.transition", requestId }, orderBy: { seq: "asc" } }))
        .map((event) => JSON.parse(event.data) as { from: string[]; to: string })
        .map((data) => [data.from, data.to]);

    for (const payer of PAYERS)
      it(`a broadcast dropped from the node's pool is broadcast again by reconciliation, and lands once (${payer.whose})`, async () => {
        const { pay, shop, grantId } = await agentPayingShop(payer);
        const nonce = await world.relayerNonce();
        const { paying, hash, reconciling } = await world.chain.holdingBlocks(async () => {
          const dropping = await droppedWhilePaying(pay, grantId, nonce);
          // Not awaited: after the relayer's transactions, the run waits its turn at the allowance behind the payment.
          const reconciling = lib.reconcile.reconcilePayments();
          // back in the pool before any block, from the bytes its ledger row kept
          const deadline = Date.now() + 10_000;
          let pooled = null;
          while (!pooled && Date.now() < deadline) {
            pooled = await world.chain.client.getTransaction({ hash: dropping.hash }).catch(() => null);
            if (!pooled) await new Promise((resolve) => setTimeout(resolve, 100));
          }
          assert.equal(pooled?.blockNumber, null, "broadcast again, not mined yet");
          return { ...dropping, reconciling };
        });
        const paid = await paying;
        await reconciling;
        assert.equal(paid.status, "completed");
        assert.equal((await spendOf(hash)).status, "landed");
        // broadcast again, not moved again: each move audited once
        assert.deepEqual(await movesOf((await requestOf(grantId)).id), [
          [["approved"], "submitted"],
          [["submitted"], "completed"],
        ]);
        assert.equal((await world.chain.client.getTransactionReceipt({ hash })).status, "success");
        assert.equal(await world.relayerNonce(), nonce + 1, "one transaction on chain");
        assert.equal(await world.balance(shop), PAYMENT, "paid once");
        await sentAgainAnswersTheFirst(paid, "completed", shop);
      });

    for (const payer of PAYERS)
      it(`a dropped broadcast whose nonce another took ends failed: spend, request (audited), nothing paid (${payer.whose})`, async () => {
        const { pay, shop, grantId } = await agentPayingShop(payer);
        const nonce = await world.relayerNonce();
        const { paying, hash } = await world.chain.holdingBlocks(async () => {
          const dropping = await droppedWhilePaying(pay, grantId, nonce);
          // the relayer's nonce taken by another of its transactions, with a higher tip, mined once the blocks come
          await relayerWallet().sendTransaction({
            to: world.relayer,
            value: 0n,
            nonce,
            maxFeePerGas: parseGwei("500"),
            maxPriorityFeePerGas: parseGwei("100"),
          });
          return dropping;
        });
        // the payment's receipt never comes: the agent hears it is submitted, not that it was paid
        const paid = await paying;
        assert.equal(paid.status, "submitted");
        await lib.reconcile.reconcilePayments();
        const request = await requestOf(grantId);
        assert.equal(request.status, "failed");
        assert.equal(request.reason, "Its transaction was dropped and another took its place: nothing was paid");
        assert.equal((await spendOf(hash)).status, "failed");
        const ledger = await lib.db.db().relayedTransaction.findUniqueOrThrow({ where: { hash } });
        assert.deepEqual([ledger.status, ledger.gasUsed, ledger.nonce], ["dropped", 0, nonce], "it cost nothing");
        assert.deepEqual(await movesOf(request.id), [
          [["approved"], "submitted"],
          [["submitted"], "failed"],
        ]);
        assert.equal(await world.relayerNonce(), nonce + 1, "the other transaction took the nonce");
        assert.equal(await world.balance(shop), 0n, "nothing paid");
        // its leaf, signed and still unused on chain, is not sent again for the same key
        await sentAgainAnswersTheFirst(paid, "failed", shop);
      });
  });
}
