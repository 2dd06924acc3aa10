// The float of the agent's account (decision 0038), with real parts: the hardhat chain on 2-second blocks with the
// Delegation Framework and Circle's USDC, a resource of `@x402/express`'s own middleware settled by `@x402/evm`'s
// unmodified facilitator (eip3009), and an agent whose person chose a float for any payee. The first payment funds its
// amount and the float; a payment the float covers is signed at once, and the account topped up in the background.
// Run on SQLite (agent-account-float.test.ts) and PostgreSQL (agent-account-float-postgres.test.ts).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { getAddress, type Address } from "viem";
import type { FacilitatorClient } from "@x402/core/server";
import { requirementHeader, startX402World, type X402World } from "./x402";
import { startEip3009Facilitator } from "./x402-eip3009";
import { eip3009Sale } from "./agent-account-cases";
import type { PaidResource } from "./x402-resource";

const PRICE = 10_000n; // 0.01 USDC
const CAP = 100_000n; // 0.1 USDC a day
const MOST = 15_000n; // 0.015 USDC a payment
const FLOAT = 30_000n; // 0.03 USDC in the agent's account

export function agentAccountFloatSuite(database: "sqlite" | "postgres") {
  describe(`x402 at a stock merchant from the agent's account's float (${database})`, { timeout: 300_000 }, () => {
    let world: X402World;
    let facilitator: FacilitatorClient;
    const resources: PaidResource[] = [];

    before(async () => {
      world = await startX402World(database);
      facilitator = await startEip3009Facilitator(world.chain);
    });
    after(async () => {
      for (const resource of resources) await resource.close();
      await world?.stop();
    });

    const merchant = (payTo: Address, amount = PRICE) =>
      eip3009Sale({ facilitator, chainId: world.chain.chainId, token: world.token, resources }, payTo, amount);

    const withFloat = (options: { perPeriod?: bigint; transactions?: number } = {}) =>
      world.agentWithAllowance({ payees: [], perPeriod: options.perPeriod ?? CAP, anyPayee: MOST, float: FLOAT, ...options });

    async function accountOf(allowanceId: string): Promise<Address> {
      const { db } = await import("@/lib/db");
      return getAddress((await db().agentAccount.findUniqueOrThrow({ where: { allowanceId } })).address);
    }

    /** Until no funding of the allowance is on its way (a top-up in the background), at most `seconds`. */
    async function settledFundings(allowanceId: string, seconds = 20) {
      const { db } = await import("@/lib/db");
      for (let pass = 0; pass < seconds * 4; pass++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        const open = await db().allowanceSpend.count({ where: { allowanceId, status: "sent" } });
        const requests = await db().agentRequest.count({ where: { status: { in: ["approved", "submitted"] } } });
        if (!open && !requests) return;
      }
      assert.fail("a funding never landed");
    }

    it("a payment the float covers: answered before the next block, no funding of its own, settled by the stock facilitator", async () => {
      const { payX402 } = await import("@/lib/x402/pay");
      const { db } = await import("@/lib/db");
      const paying = await withFloat();
      const { agent, credentialId, allowanceId, person } = paying;
      const before = await world.tokenBalance(person);
      await world.chain.miningEvery(2000, async () => {
        const first = await payX402(agent, credentialId, (await merchant(world.recipient())).required);
        assert.ok(first.header);
        const account = await accountOf(allowanceId);
        assert.equal(await world.tokenBalance(account), PRICE + FLOAT, "the first payment funds its amount and the float");
        assert.equal(await world.tokenBalance(person), before - PRICE - FLOAT);
        // "left" counts what is in the agent's account free of its payments on their way: the float
        const { allowanceForAgent } = await import("@/lib/allowances/agent");
        const limit = async () => (await allowanceForAgent(agent, credentialId)).allowances[0].limits[0];
        assert.deepEqual(
          [(await limit()).left, (await limit()).in_agent_account, (await limit()).transfers_left],
          ["0.09", "0.03", 19],
          "0.1 USDC less the payment, of which the float in the agent's account",
        );
        // Clients' view of it: the same words, and the any-payee warning names the float
        const { allowanceViews } = await import("@/lib/allowances/view");
        const [shown] = await allowanceViews({ grantId: agent.grantId }, { person: { nameOf: (address) => address } });
        assert.deepEqual([shown.limits[0].left, shown.limits[0].inAgentAccount], ["0.09", "0.03"]);
        assert.match(shown.warning!, / A compromised server could take the float, up to 0\.03 USDC, and what is left of the cap\.$/);

        const payee = world.recipient();
        const sale = await merchant(payee);
        const block = await world.chain.client.getBlockNumber();
        const started = performance.now();
        const paid = await payX402(agent, credentialId, sale.required);
        const took = performance.now() - started;
        assert.ok(paid.header);
        assert.ok(took < 1000, `answered in ${took} ms`);
        assert.ok((await world.chain.client.getBlockNumber()) - block <= 1n, "answered before a block of its own");
        const row = await db().x402Payment.findUniqueOrThrow({ where: { id: paid.payment_id! } });
        assert.equal(row.fromFloat, true, "signed from the float");
        const spent = await db().auditEvent.findMany({ where: { type: "allowance.spent", clientId: agent.clientId } });
        const audited = spent.map((event) => JSON.parse(event.data) as Record<string, unknown>).find((data) => data.paymentId === row.id);
        assert.equal(audited?.fundedBy, undefined, "no funding of its own");
        assert.equal(audited?.fromFloat, true);
        const request = await db().agentRequest.findUniqueOrThrow({
          where: { id: spent.find((e) => e.data.includes(row.id))!.requestId! },
        });
        assert.equal(request.txHash, null, "its request sent nothing");

        // the stock facilitator settles it; the account is topped up back to the float, by the payment's amount
        const response = await fetch(sale.url, { headers: { [paid.header!]: paid.value! } });
        assert.equal(response.status, 200);
        assert.equal(await world.tokenBalance(payee), PRICE);
        await settledFundings(allowanceId);
        const fundings = await db().allowanceSpend.findMany({ where: { allowanceId }, orderBy: { createdAt: "asc" } });
        assert.deepEqual(
          fundings.map((spend) => [spend.amount, spend.status]),
          [
            [String(PRICE + FLOAT), "landed"],
            [String(PRICE), "landed"],
          ],
          "the first funding, then one top-up of the payment's amount",
        );
        // the first payment is still unsettled: the account holds it and the float
        assert.equal(await world.tokenBalance(account), PRICE + FLOAT);
        // two payments made, three counted (the top-up is one on chain); the float still in the agent's account
        assert.deepEqual([(await limit()).left, (await limit()).in_agent_account, (await limit()).transfers_left], ["0.08", "0.03", 17]);
      });
    });

    it("20 concurrent payments never pass the cap, and nothing is signed beyond what the account was funded with", async () => {
      const { payX402 } = await import("@/lib/x402/pay");
      const { db } = await import("@/lib/db");
      const cap = 50_000n;
      const { agent, credentialId, allowanceId, person } = await withFloat({ perPeriod: cap });
      const before = await world.tokenBalance(person);
      const sales = await Promise.all(Array.from({ length: 20 }, () => merchant(world.recipient())));
      await world.chain.miningEvery(2000, async () => {
        const outcomes = await Promise.allSettled(sales.map((sale) => payX402(agent, credentialId, sale.required)));
        const paid = outcomes.flatMap((outcome, index) =>
          outcome.status === "fulfilled" ? [{ paid: outcome.value, sale: sales[index] }] : [],
        );
        for (const outcome of outcomes)
          if (outcome.status === "rejected")
            assert.match((outcome.reason as { code?: string }).code ?? "", /^allowance_(refused|busy)$/, String(outcome.reason));
        assert.ok(paid.length >= 1);
        assert.ok(BigInt(paid.length) * PRICE <= cap, `${paid.length} payments within the cap`);
        for (const { paid: one, sale } of paid)
          assert.equal((await fetch(sale.url, { headers: { [one.header!]: one.value! } })).status, 200, "each one settles");
        await settledFundings(allowanceId);
        const moved = before - (await world.tokenBalance(person));
        assert.ok(moved <= cap, "the chain moved no more than the cap");
        const account = await accountOf(allowanceId);
        assert.equal(await world.tokenBalance(account), moved - BigInt(paid.length) * PRICE, "every payment signed was funded");
        assert.ok((await world.tokenBalance(account)) <= FLOAT, "the account holds no more than the float");
        assert.equal(await db().x402Payment.count({ where: { allowanceId } }), paid.length, "nothing else was signed");
      });
    });

    it("the number of payments counts those from the float: a top-up is one on chain, a payment from the float one more", async () => {
      const { payX402 } = await import("@/lib/x402/pay");
      const { db } = await import("@/lib/db");
      const { agent, credentialId, allowanceId } = await withFloat({ transactions: 3 });
      await world.chain.miningEvery(2000, async () => {
        assert.ok((await payX402(agent, credentialId, (await merchant(world.recipient())).required)).header, "funded: one");
        const floated = await payX402(agent, credentialId, (await merchant(world.recipient())).required);
        assert.ok(floated.header, "from the float: two, its top-up three");
        await settledFundings(allowanceId);
        await assert.rejects(payX402(agent, credentialId, (await merchant(world.recipient())).required), (error: unknown) => {
          assert.equal((error as { code?: string }).code, "allowance_refused", String(error));
          assert.match((error as Error).message, /no payments left/);
          return true;
        });
        assert.equal(await db().x402Payment.count({ where: { allowanceId } }), 2, "nothing signed for the third");
      });
    });

    it("a float below the most per payment or above the period's cap, or without any payee, is refused at consent", async () => {
      const { specFromChoices } = await import("@/lib/allowances/caveats");
      const token = { address: world.token, amount: "0.1", decimals: 6, perPayment: "0.015" };
      const choices = (float: string, anyPayee = true) => ({
        chainId: world.chain.chainId,
        delegator: world.recipient(),
        delegate: world.recipient(),
        tokens: [anyPayee ? { ...token, float } : { address: world.token, amount: "0.1", decimals: 6, float }],
        recipients: anyPayee ? [] : [world.recipient()],
        anyPayee,
        period: "day" as const,
        transactions: 5,
        overLimit: "refuse" as const,
      });
      const now = Math.floor(Date.now() / 1000);
      assert.equal(specFromChoices(choices("0.03"), now).tokens[0].float, FLOAT);
      assert.throws(() => specFromChoices(choices("0.01"), now), /at least the token's most per payment/);
      assert.throws(() => specFromChoices(choices("0.2"), now), /no more than its amount per period/);
      assert.throws(() => specFromChoices(choices("0.03", false), now), /A float goes with any payee only/);
      // an offer the stock facilitator cannot settle is still refused before the float moves
      const { agent, credentialId, allowanceId } = await withFloat();
      const misnamed = requirementHeader({
        chainId: world.chain.chainId,
        asset: world.token,
        amount: String(PRICE),
        payTo: world.recipient(),
        extra: { name: "USDC", version: "2" },
      });
      const { payX402 } = await import("@/lib/x402/pay");
      await assert.rejects(payX402(agent, credentialId, misnamed), /domain as "USDC"/);
      const { db } = await import("@/lib/db");
      assert.equal(await db().allowanceSpend.count({ where: { allowanceId } }), 0);
    });

    it("Return what the agent's account holds: the float goes back, payments on their way settle, the allowance pays on", async () => {
      const { payX402 } = await import("@/lib/x402/pay");
      const { db } = await import("@/lib/db");
      const { returnAgentAccountForUser } = await import("@/lib/allowances/person");
      const { namesFor, summarizeEvent } = await import("@/lib/audit/describe");
      const { parseAuditData } = await import("@/lib/audit/query");
      const { agent, credentialId, allowanceId, person } = await withFloat();
      const before = await world.tokenBalance(person);
      await world.chain.miningEvery(2000, async () => {
        const payee = world.recipient();
        const sale = await merchant(payee);
        const unsettled = await payX402(agent, credentialId, sale.required);
        assert.ok(unsettled.header);
        const account = await accountOf(allowanceId);
        const { userId } = await db().allowance.findUniqueOrThrow({ where: { id: allowanceId } });
        const { txHashes } = await returnAgentAccountForUser(userId, allowanceId);
        assert.equal(txHashes.length, 1);
        assert.equal(await world.tokenBalance(account), PRICE, "the float went back; the payment on its way stays");
        assert.equal(await world.tokenBalance(person), before - PRICE);
        const sweep = await db().relayedTransaction.findUniqueOrThrow({ where: { hash: txHashes[0] } });
        assert.deepEqual([sweep.purpose, sweep.status], ["sweep", "landed"]);
        const rows = await db().auditEvent.findMany({ where: { type: "agent_account.returned", userId } });
        const events = rows.map((row) => ({ ...row, data: parseAuditData(row.data) }));
        const names = await namesFor(userId, events, {}, async () => ({ symbol: "USDC", decimals: 6 }));
        assert.equal(
          summarizeEvent(events[0], names),
          "0.03 USDC sent back to your wallet from the agent's account of an allowance that goes on",
        );
        assert.equal((await fetch(sale.url, { headers: { [unsettled.header!]: unsettled.value! } })).status, 200, "it still settles");
        assert.equal(await world.tokenBalance(account), 0n);
        assert.equal((await db().allowance.findUniqueOrThrow({ where: { id: allowanceId } })).status, "active");
        assert.equal((await db().agentAccount.findUniqueOrThrow({ where: { allowanceId } })).returnedAt, null);

        // the allowance keeps paying: the next payment funds its amount and the float again
        const next = await merchant(world.recipient());
        const paid = await payX402(agent, credentialId, next.required);
        assert.equal((await fetch(next.url, { headers: { [paid.header!]: paid.value! } })).status, 200);
        assert.equal(await world.tokenBalance(account), FLOAT);
      });
    });

    it("Revoke allowance sends the float back to the person", async () => {
      const { payX402 } = await import("@/lib/x402/pay");
      const { db } = await import("@/lib/db");
      const { prepareRevocation, revokeAllowances } = await import("@/lib/allowances/revocation");
      const { signRevocation } = await import("@/lib/allowances/revocation-operation");
      const { agent, credentialId, allowanceId, person, personKey } = await withFloat();
      const before = await world.tokenBalance(person);
      await world.chain.miningEvery(2000, async () => {
        // paid and never presented: the account holds the payment and the float
        assert.ok((await payX402(agent, credentialId, (await merchant(world.recipient())).required)).header);
        const account = await accountOf(allowanceId);
        assert.equal(await world.tokenBalance(account), PRICE + FLOAT);
        const { userId } = await db().allowance.findUniqueOrThrow({ where: { id: allowanceId } });
        const prepared = await prepareRevocation(userId, [allowanceId]);
        await revokeAllowances(userId, [allowanceId], { nonce: prepared.nonce, signature: await signRevocation(personKey, prepared) });
        assert.equal(await world.tokenBalance(account), 0n, "the account holds nothing after the revocation");
        assert.equal(await world.tokenBalance(person), before, "the float went back to the person");
      });
    });
  });
}
