// The app killed with payments from allowances in flight (issue 55, finding 2), on SQLite
// (e2e/allowances/crashed-payments.test.ts) and PostgreSQL (e2e/postgres/crashed-payments.test.ts): four agents over MCP,
// each paying from an allowance of its own (one allowance pays one at a time, its lease held until the receipt), on a
// hardhat chain that mines a block every 2 seconds with a mempool; two pay from Agent Wallet's key (send_transaction),
// two sign the payment with their own key (send_allowance_payment, with an idempotency key). The blocks are held while
// the payments are sent: once the relayer's four transactions wait in the mempool the server is SIGKILLed; then a block
// mines the four, the blocks come every 2 s again, and the app starts again on the same database: every request ends
// completed with its transaction, each of its moves audited once, every spend landed, nothing paid twice; an agent
// that sends its signed payment again with its key, its answer lost in the crash, is answered the first payment.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseEther, type Hex } from "viem";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { RequestView, ToolOutput } from "@/contract";
import { startApp, type RunningApp } from "./app";
import { agentOverMcp, signAllowanceFor, startAllowanceApp, type AllowanceApp } from "./allowances";
import { signedLeaf } from "./agent-leaf";
import { connectWithBearer } from "./mcp-client";

const PAYMENTS = 4;

/** Asks until `check` holds, every half second, for up to `ms`; the last answer. */
async function until<T>(ms: number, read: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

export function crashedPaymentsSuite(database: "sqlite" | "postgres") {
  describe(`payments in flight when the app is killed (${database}, 2-second blocks)`, { timeout: 300_000 }, () => {
    let world: AllowanceApp;
    let restarted: RunningApp | undefined;
    const clients: Client[] = [];

    before(async () => {
      world = await startAllowanceApp({ database });
      await world.chain.mineEvery(2000);
    });
    after(async () => {
      // the killed server's clients have no one to close with
      await Promise.allSettled(clients.map((client) => client.close()));
      await restarted?.stop();
      await world?.stop();
    });

    it("settles each payment against the chain once the app starts again: completed, audited, paid once", async () => {
      const { db } = await import("@/lib/db");
      const { chain, app } = world;
      const shop = world.recipient();
      const payment = { to: shop, value: String(parseEther("0.001")) };
      type Paying = { allowanceId: string; pay: (client: Client) => Promise<unknown>; again?: (client: Client) => Promise<unknown> };
      const agents: (Awaited<ReturnType<typeof agentOverMcp>> & Paying)[] = [];
      for (let made = 0; made < PAYMENTS; made++) {
        const agent = await agentOverMcp(world);
        clients.push(agent.client);
        // every other agent holds its allowance's key, and signs its payment before the blocks are held
        const agentKey = made % 2 ? privateKeyToAccount(generatePrivateKey()) : undefined;
        const { id } = await signAllowanceFor(
          chain,
          agent.person,
          { userId: agent.userId, grantId: agent.grantId, credentialId: agent.credentialId },
          { recipients: [shop], native: parseEther("0.01"), transactions: 5, ...(agentKey && { delegate: agentKey.address }) },
        );
        const named = { credential_id: agent.credentialId, chain_id: chain.chainId };
        if (!agentKey) {
          const pay = (client: Client) => client.callTool({ name: "send_transaction", arguments: { ...named, ...payment } });
          agents.push({ ...agent, allowanceId: id, pay });
          continue;
        }
        /** The payment's delegation prepared and signed afresh, sent with the agent's idempotency key for it. */
        const signedPayment = async (client: Client) => {
          const prepared = await client.callTool({ name: "prepare_allowance_payment", arguments: { ...named, ...payment } });
          const { delegation } = prepared.structuredContent as ToolOutput<"prepare_allowance_payment">;
          const signed = await signedLeaf(delegation, agentKey, world.environment.DelegationManager, chain.chainId);
          return { ...named, delegation: signed, idempotency_key: `crash-${made}` };
        };
        const sent = await signedPayment(agent.client);
        agents.push({
          ...agent,
          allowanceId: id,
          pay: (client) => client.callTool({ name: "send_allowance_payment", arguments: sent }),
          // the SDK's retry prepares the payment again: its key, not the delegation, makes it the same payment
          again: async (client) => client.callTool({ name: "send_allowance_payment", arguments: await signedPayment(client) }),
        });
      }
      const allowanceIds = agents.map((agent) => agent.allowanceId);
      const versionsOf = async () =>
        (await db().allowance.findMany({ where: { id: { in: allowanceIds } }, orderBy: { id: "asc" } })).map((row) => row.stateVersion);
      const nonceBefore = await world.relayerNonce();

      // No block while the payments are sent and the server killed: each waits for a receipt that does not come.
      const calls = await chain.holdingBlocks(async () => {
        const calls = agents.map((agent) => agent.pay(agent.client).catch((error: unknown) => error));
        const pending = () => chain.client.getTransactionCount({ address: world.relayer, blockTag: "pending" });
        assert.equal(await until(60_000, pending, (count) => count === nonceBefore + PAYMENTS), nonceBefore + PAYMENTS, app.output());
        await app.kill();
        return calls;
      });
      await Promise.all(calls);
      const versionsAtCrash = await versionsOf();
      // in the block that ends the hold; from then on one every 2 s
      assert.equal(await world.relayerNonce(), nonceBefore + PAYMENTS, "the four transactions were mined");

      // The same deployment started again: same database, data folder and settings.
      restarted = await startApp({ instanceOf: app });
      const requests = () => db().agentRequest.findMany({ where: { grantId: { in: agents.map((agent) => agent.grantId) } } });
      const settled = await until(120_000, requests, (rows) => rows.length === PAYMENTS && rows.every((row) => row.status === "completed"));
      assert.deepEqual(
        settled.map((row) => [row.status, /^0x[0-9a-f]{64}$/.test(row.txHash ?? "")]),
        agents.map(() => ["completed", true]),
        restarted.output(),
      );

      const { summarizeEvent, namesFor } = await import("@/lib/audit/describe");
      for (const row of settled) {
        const receipt = await chain.client.getTransactionReceipt({ hash: row.txHash as Hex });
        assert.equal(receipt.status, "success");
        // submitted before the broadcast, completed from the receipt after the restart: each move audited once
        const events = (
          await db().auditEvent.findMany({ where: { type: "request.transition", requestId: row.id }, orderBy: { seq: "asc" } })
        ).map((event) => ({ ...event, data: JSON.parse(event.data) as Record<string, unknown> }));
        assert.deepEqual(
          events.map((event) => [event.data.from, event.data.to]),
          [
            [["approved"], "submitted"],
            [["submitted"], "completed"],
          ],
        );
        assert.equal(events[0].data.txHash, row.txHash);
        const names = await namesFor(row.userId, events, {});
        assert.equal(summarizeEvent(events[1], names), `Sent 0.001 ETH to ${shop} from the allowance, without a tap: included in a block`);
      }
      const spends = await until(
        30_000,
        () => db().allowanceSpend.findMany({ where: { allowanceId: { in: allowanceIds } } }),
        (rows) => rows.every((row) => row.status === "landed"),
      );
      assert.deepEqual(
        spends.map((spend) => spend.status),
        agents.map(() => "landed"),
      );
      assert.deepEqual(spends.map((spend) => spend.txHash).sort(), settled.map((row) => row.txHash).sort());
      // what the chain holds of each allowance changed: the next payment reads it again
      const versionsNow = await versionsOf();
      assert.ok(
        versionsNow.every((version, index) => version > versionsAtCrash[index]),
        `${versionsAtCrash} → ${versionsNow}`,
      );
      assert.equal(await world.relayerNonce(), nonceBefore + PAYMENTS, "nothing was sent again");
      assert.equal(await chain.client.getBalance({ address: shop }), parseEther("0.001") * BigInt(PAYMENTS));

      // An agent that signed its payment sends it again with its key, the first answer lost with the server: it is
      // answered the payment the restarted app settled, and nothing is sent again.
      const signing = agents.filter((agent) => agent.again);
      assert.equal(signing.length, PAYMENTS / 2);
      for (const agent of signing) {
        const client = await connectWithBearer(restarted.baseUrl, agent.accessToken);
        clients.push(client);
        const again = (await agent.again!(client)) as { structuredContent?: unknown };
        const view = again.structuredContent as RequestView;
        const first = settled.find((row) => row.grantId === agent.grantId)!;
        assert.deepEqual([view.request_id, view.status, view.tx_hash], [first.id, "completed", first.txHash], JSON.stringify(again));
      }
      assert.equal(await world.relayerNonce(), nonceBefore + PAYMENTS, "nothing was sent for the retries");
      assert.equal(await chain.client.getBalance({ address: shop }), parseEther("0.001") * BigInt(PAYMENTS), "nor paid twice");
    });
  });
}
