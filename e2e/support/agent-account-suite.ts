// Paying a stock x402 merchant with no tap (decision 0035), with real parts: the hardhat chain with the Delegation
// Framework and Circle's USDC, a resource of `@x402/express`'s own middleware and `@x402/evm`'s exact scheme settled by
// its unmodified facilitator (eip3009), and an agent whose person signed an allowance for any payee. Each payment is
// funded within the allowance (a redemption the chain caps) into the allowance's agent account, which signs the
// EIP-3009 authorization. The app reaches the chain through a fault proxy (fault-proxy.ts), which fails the sweep of
// a revoked allowance's agent account in one case. Run on SQLite (agent-account.test.ts) and PostgreSQL
// (agent-account-postgres.test.ts).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { getAddress, parseAbi, parseSignature, parseTransaction, toHex, type Address, type Hex, type PrivateKeyAccount } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { FacilitatorClient } from "@x402/core/server";
import {
  eip3009Sale,
  assertConcurrentPaymentsWithinTheCap,
  assertRetryAnswersTheSamePayment,
  paidFromTheAccount,
  settledByTheMerchant,
} from "./agent-account-cases";
import { fundedWallet } from "./chain";
import { faultProxy, type FaultProxy, type ProxiedCall } from "./fault-proxy";
import { requirementHeader, startX402World, type X402World } from "./x402";
import { startEip3009Facilitator } from "./x402-eip3009";
import type { PaidResource } from "./x402-resource";

/** FiatToken's transferWithAuthorization, as anyone holding a signed authorization can send it. */
const TRANSFER_BY_AUTHORIZATION = parseAbi([
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, " +
    "bytes32 nonce, uint8 v, bytes32 r, bytes32 s)",
]);

const PRICE = 10_000n; // 0.01 USDC
const CAP = 50_000n; // 0.05 USDC a day
const MOST = 15_000n; // 0.015 USDC a payment

export function agentAccountSuite(database: "sqlite" | "postgres") {
  describe(`x402 at a stock merchant from the agent's account (${database})`, { timeout: 300_000 }, () => {
    let world: X402World;
    let facilitator: FacilitatorClient;
    let proxy: FaultProxy;
    const resources: PaidResource[] = [];

    before(async () => {
      world = await startX402World(database, async (chain) => {
        proxy = await faultProxy(chain.rpcUrl);
        return proxy.rpcUrl;
      });
      facilitator = await startEip3009Facilitator(world.chain);
    });
    after(async () => {
      for (const resource of resources) await resource.close();
      await proxy?.stop();
      await world?.stop();
    });

    /** A stock merchant selling a report to `payTo` for `amount`, and its PAYMENT-REQUIRED. */
    const merchant = (payTo: Address, amount = PRICE) =>
      eip3009Sale({ facilitator, chainId: world.chain.chainId, token: world.token, resources }, payTo, amount);

    const anyPayee = () => world.agentWithAllowance({ payees: [], perPeriod: CAP, anyPayee: MOST });

    async function accountOf(allowanceId: string): Promise<Address> {
      const { db } = await import("@/lib/db");
      return getAddress((await db().agentAccount.findUniqueOrThrow({ where: { allowanceId } })).address);
    }

    /** The person presses Revoke allowance and signs its disabling: revoked once the chain shows it. */
    async function revoke(allowanceId: string, personKey: PrivateKeyAccount) {
      const { db } = await import("@/lib/db");
      const { prepareRevocation, revokeAllowances } = await import("@/lib/allowances/revocation");
      const { signRevocation } = await import("@/lib/allowances/revocation-operation");
      const { userId } = await db().allowance.findUniqueOrThrow({ where: { id: allowanceId } });
      const prepared = await prepareRevocation(userId, [allowanceId]);
      await revokeAllowances(userId, [allowanceId], { nonce: prepared.nonce, signature: await signRevocation(personKey, prepared) });
      assert.equal((await db().allowance.findUniqueOrThrow({ where: { id: allowanceId } })).status, "revoked");
    }

    /** The audit's sentence for the sweep of the allowance's agent account, and the transaction it names. */
    async function sweepAudited(allowanceId: string) {
      const { db } = await import("@/lib/db");
      const { namesFor, summarizeEvent } = await import("@/lib/audit/describe");
      const { parseAuditData } = await import("@/lib/audit/query");
      const rows = await db().auditEvent.findMany({ where: { type: "agent_account.returned" } });
      const events = rows.map((row) => ({ ...row, data: parseAuditData(row.data) })).filter((row) => row.data.allowanceId === allowanceId);
      assert.equal(events.length, 1, "one sweep audited");
      const names = await namesFor(events[0].userId!, events, {}, async () => ({ symbol: "USDC", decimals: 6 }));
      return { words: summarizeEvent(events[0], names), txHash: events[0].data.txHash as Hex };
    }

    it("pays with no tap: the merchant answers 200, its payTo holds the amount, the agent's account nothing", async () => {
      const paying = await anyPayee();
      const payee = world.recipient();
      const sale = await merchant(payee);
      const before = await world.tokenBalance(paying.person);
      await world.chain.miningEvery(2000, async () => {
        const expect = { payee, price: PRICE, balanceOf: world.tokenBalance };
        const { paid, account, payload } = await paidFromTheAccount(paying, sale, expect);
        // the exact eip3009 payload @x402/evm's client builds: the authorization's fields as strings, and its signature
        const { authorization } = payload as { authorization: Record<string, string>; signature: Hex };
        assert.deepEqual(Object.keys(payload), ["authorization", "signature"]);
        assert.deepEqual(Object.keys(authorization), ["from", "to", "value", "validAfter", "validBefore", "nonce"]);
        assert.equal(authorization.from, account);
        assert.equal(authorization.to, payee);
        assert.equal(authorization.value, String(PRICE));

        const gas = await settledByTheMerchant(paying, sale, paid, { ...expect, account, before }, world.chain.client);
        console.log(`gas: funding ${gas.funding}, settlement ${gas.settlement}, together ${gas.funding + gas.settlement}`);
      });
    });

    it("the payment's request reads as the payment it made, from the agent's account, never as the funding's transfer", async () => {
      const { payX402 } = await import("@/lib/x402/pay");
      const { db } = await import("@/lib/db");
      const { paidHeadlines, paidWithoutTap } = await import("@/lib/x402/paid");
      const { agent, credentialId, allowanceId } = await anyPayee();
      const payee = world.recipient();
      const { url, required } = await merchant(payee);
      const paid = await payX402(agent, credentialId, required);
      assert.ok(paid.header);
      const request = await db().agentRequest.findFirstOrThrow({ where: { grantId: agent.grantId } });
      assert.ok(request.txHash, "the request is the funding, with its transaction");
      const shown = await paidWithoutTap(agent.userId, request.id, world.chain.chainId);
      assert.ok(shown, "the request's page shows the payment");
      assert.equal(shown.amount, "0.01 USDC");
      assert.equal(shown.payee, payee);
      assert.equal(shown.resource.url, url);
      const { address } = await db().agentAccount.findUniqueOrThrow({ where: { allowanceId } });
      assert.equal(shown.agentAccount, getAddress(address));
      const listed = await paidHeadlines(agent.userId, [{ id: request.id, chainId: world.chain.chainId }], {
        [payee.toLowerCase()]: "Shop",
      });
      assert.equal(listed.get(request.id), `Paid 0.01 USDC to Shop for ${new URL(url).host}`);
    });

    it("a retry with the call's idempotency key answers the same payment, funded once", async () => {
      await assertRetryAnswersTheSamePayment(await anyPayee(), await merchant(world.recipient()));
    });

    it("a funding not mined within the minute: busy, nothing signed; once it lands a retry with the key signs from it", async () => {
      const { earlierPayment, payX402 } = await import("@/lib/x402/pay");
      const { idempotencyOf, once } = await import("@/lib/wallet/idempotency");
      const { reconcilePayments } = await import("@/lib/allowances/reconcile");
      const { systemClock } = await import("@/lib/clock");
      const { db } = await import("@/lib/db");
      const paying = await anyPayee();
      const { agent, credentialId, allowanceId, person } = paying;
      const payee = world.recipient();
      const sale = await merchant(payee);
      const before = await world.tokenBalance(person);
      const idempotency = idempotencyOf("pay_x402", {
        credential_id: credentialId,
        payment_required: sale.required,
        idempotency_key: "held",
      });
      // as the server composes a keyed pay_x402 (lib/mcp/server.ts)
      const call = () =>
        once(
          agent,
          idempotency,
          () => payX402(agent, credentialId, sale.required, systemClock, { idempotency }),
          (row) =>
            earlierPayment(agent, row, (funded) => payX402(agent, credentialId, sale.required, systemClock, { idempotency, funded })),
        );
      const busy = (error: unknown) => {
        assert.equal((error as { code?: string }).code, "allowance_busy", String(error));
        return true;
      };
      await world.chain.holdingBlocks(async () => {
        await assert.rejects(call(), (error: unknown) => {
          busy(error);
          assert.match((error as Error).message, /is not mined yet, so nothing was signed/);
          return true;
        });
        // a retry while it still waits: not paid yet, and nothing funded again
        await assert.rejects(call(), busy);
      });
      assert.equal(await db().x402Payment.count({ where: { allowanceId } }), 0, "nothing was signed");
      await world.chain.miningEvery(2000, async () => {
        // the funding lands; reconciliation records it, as the server's pass every 15 s does
        const account = await accountOf(allowanceId);
        for (let pass = 0; pass < 10 && (await world.tokenBalance(account)) !== PRICE; pass++)
          await new Promise((resolve) => setTimeout(resolve, 1000));
        await reconcilePayments();
        const [retried, again] = await Promise.all([call(), call()]);
        assert.ok(retried.header, "the retry signs from what the funding moved");
        assert.equal(again.payment_id, retried.payment_id, "two retries at once answer one payment");
        assert.equal(await db().allowanceSpend.count({ where: { allowanceId } }), 1, "funded once");
        assert.equal(await db().x402Payment.count({ where: { allowanceId } }), 1, "signed once");
        const response = await fetch(sale.url, { headers: { [retried.header!]: retried.value! } });
        assert.equal(response.status, 200);
        assert.equal(await world.tokenBalance(payee), PRICE);
        assert.equal(await world.tokenBalance(account), 0n);
        assert.equal(await world.tokenBalance(person), before - PRICE);
      });
    });

    it("a copy of the database and ALLOWANCE_KEY_SECRET moves what the person was told: the account's payments and the cap", async () => {
      const { payX402 } = await import("@/lib/x402/pay");
      const { db } = await import("@/lib/db");
      const { unsealDelegateKey } = await import("@/lib/allowances/key-secret");
      const { TRANSFER_WITH_AUTHORIZATION } = await import("@/contract/eip3009");
      const { agent, credentialId, allowanceId, person } = await anyPayee();
      const before = await world.tokenBalance(person);
      // a payment on its way: funded, signed, not yet presented to its merchant
      assert.ok((await payX402(agent, credentialId, (await merchant(world.recipient())).required)).header);
      // the thief's copy: the account's sealed key and the secret open it, and a wallet of their own pays the gas
      const row = await db().agentAccount.findUniqueOrThrow({ where: { allowanceId } });
      const stolen = privateKeyToAccount(unsealDelegateKey(row.sealed, row.address).privateKey);
      const thief = world.recipient();
      const wallet = await fundedWallet(world.chain);
      const take = async (value: bigint) => {
        const message = {
          from: stolen.address,
          to: thief,
          value,
          validAfter: 0n,
          validBefore: BigInt(Math.floor(Date.now() / 1000) + 600),
          nonce: toHex(randomBytes(32)),
        };
        const signature = await stolen.signTypedData({
          domain: { name: "USD Coin", version: "2", chainId: world.chain.chainId, verifyingContract: world.token },
          types: { TransferWithAuthorization: TRANSFER_WITH_AUTHORIZATION },
          primaryType: "TransferWithAuthorization",
          message,
        });
        const { v, r, s } = parseSignature(signature);
        const args = [message.from, message.to, value, message.validAfter, message.validBefore, message.nonce, Number(v), r, s] as const;
        return wallet
          .writeContract({ address: world.token, abi: TRANSFER_BY_AUTHORIZATION, functionName: "transferWithAuthorization", args })
          .then(
            async (hash) => (await wallet.waitForTransactionReceipt({ hash })).status === "success",
            () => false,
          );
      };
      // the account: what it holds for the payment on its way, and nothing more
      assert.equal(await take(PRICE + 1n), false, "more than the account holds");
      assert.equal(await take(PRICE), true, "the payment on its way");
      // the delegate key the same secret opens: what is left of the cap, to anyone, and no more
      const left = CAP - PRICE;
      assert.equal((await world.settleWithStolenKey(allowanceId, thief, left + 1n)).success, false, "past the cap");
      assert.equal((await world.settleWithStolenKey(allowanceId, thief, left)).success, true, world.facilitator.lastRefusal() ?? undefined);
      assert.equal(await world.tokenBalance(thief), CAP, "what the warning says: the payments on their way and what is left of the cap");
      assert.equal(await world.tokenBalance(person), before - CAP);
      assert.equal((await world.settleWithStolenKey(allowanceId, thief, 1n)).success, false, "and no more");
    });

    it("20 concurrent payments never pay past the cap: the chain's cap and the server's count agree", async () => {
      const paying = await anyPayee();
      const sales = await Promise.all(Array.from({ length: 20 }, () => merchant(world.recipient())));
      await assertConcurrentPaymentsWithinTheCap(paying, sales, { paying: Number(CAP / PRICE), cap: CAP, balanceOf: world.tokenBalance });
    });

    it("above the most per payment, or in a domain not the token's, refused, nothing funded; named payees get one tap", async () => {
      const { payX402 } = await import("@/lib/x402/pay");
      const { X402NotPayableError } = await import("@/lib/x402/choose");
      const { db } = await import("@/lib/db");
      const { agent, credentialId, allowanceId } = await anyPayee();
      const greedy = await merchant(world.recipient(), MOST + 1n);
      await assert.rejects(payX402(agent, credentialId, greedy.required), (error: unknown) => {
        assert.ok(error instanceof X402NotPayableError, String(error));
        assert.match(error.message, /above the most the allowance pays any payee at once \(15000 base units\)/);
        return true;
      });
      assert.equal(await db().allowanceSpend.count({ where: { allowanceId } }), 0, "nothing was funded");
      // an EIP-712 domain that is not the token's own would fund an authorization no facilitator settles
      const offer = { chainId: world.chain.chainId, asset: world.token, amount: String(PRICE), payTo: world.recipient() };
      const misnamed = requirementHeader({ ...offer, extra: { name: "USDC", version: "2" } });
      await assert.rejects(payX402(agent, credentialId, misnamed), (error: unknown) => {
        assert.ok(error instanceof X402NotPayableError, String(error));
        assert.match(error.message, /domain as "USDC" version "2", but the token on chain \d+ says "USD Coin" version "2"/);
        return true;
      });
      assert.equal(await db().allowanceSpend.count({ where: { allowanceId } }), 0, "nothing was funded");

      const payee = world.recipient();
      const named = await world.agentWithAllowance({ payees: [payee], perPeriod: CAP });
      const asked = await payX402(named.agent, named.credentialId, (await merchant(payee)).required);
      assert.equal(asked.header, null, "a named-payee allowance does not pay eip3009 alone");
      assert.ok(asked.request_id, "the person is asked for one tap");
      assert.equal(await db().allowanceSpend.count({ where: { allowanceId: named.allowanceId } }), 0);
    });

    it("the spending policy refuses a payment above its most per transaction, audited, with nothing funded", async () => {
      const { payX402 } = await import("@/lib/x402/pay");
      const { PolicyViolation } = await import("@/lib/wallet/policy");
      const { db } = await import("@/lib/db");
      const { agent, credentialId, allowanceId } = await anyPayee();
      await db().grantCredential.update({
        where: { grantId_credentialId: { grantId: agent.grantId, credentialId } },
        data: { policy: JSON.stringify({ tokens: [{ chain_id: world.chain.chainId, token: world.token, per_transaction: "5000" }] }) },
      });
      await assert.rejects(payX402(agent, credentialId, (await merchant(world.recipient())).required), (error: unknown) => {
        assert.ok(error instanceof PolicyViolation, String(error));
        assert.equal(error.rule, "tokens.per_transaction");
        return true;
      });
      assert.equal(await db().allowanceSpend.count({ where: { allowanceId } }), 0, "nothing was funded");
      assert.equal(await db().auditEvent.count({ where: { type: "policy.refused", clientId: agent.clientId } }), 1);
    });

    it("the spending policy's allowed recipients are the merchants paid, never the agent's account that a funding fills", async () => {
      const { payX402 } = await import("@/lib/x402/pay");
      const { PolicyViolation } = await import("@/lib/wallet/policy");
      const { db } = await import("@/lib/db");
      const { agent, credentialId, allowanceId } = await anyPayee();
      const shop = world.recipient();
      await db().grantCredential.update({
        where: { grantId_credentialId: { grantId: agent.grantId, credentialId } },
        data: { policy: JSON.stringify({ recipients: [shop] }) },
      });
      const paid = await payX402(agent, credentialId, (await merchant(shop)).required);
      assert.ok(paid.header, "the allowed merchant is paid with no tap");
      assert.equal(paid.payee, shop);
      const stranger = world.recipient();
      await assert.rejects(payX402(agent, credentialId, (await merchant(stranger)).required), (error: unknown) => {
        assert.ok(error instanceof PolicyViolation, String(error));
        assert.equal(error.rule, "recipients");
        assert.match(error.message, new RegExp(`${stranger} is not an allowed recipient`, "i"));
        return true;
      });
      assert.equal(await db().allowanceSpend.count({ where: { allowanceId } }), 1, "only the allowed merchant's payment was funded");
    });

    it("after Revoke allowance the next payment is not paid from it, and what the agent's account held goes back, audited", async () => {
      const { payX402 } = await import("@/lib/x402/pay");
      const { db } = await import("@/lib/db");
      const { agent, credentialId, allowanceId, person, personKey } = await anyPayee();
      const before = await world.tokenBalance(person);
      // paid and never presented to the merchant: what it moved stays in the agent's account
      const first = await merchant(world.recipient());
      await world.chain.miningEvery(2000, async () => {
        const unused = await payX402(agent, credentialId, first.required);
        assert.ok(unused.header);
        const account = await accountOf(allowanceId);
        assert.equal(await world.tokenBalance(account), PRICE);

        await revoke(allowanceId, personKey);
        assert.equal(await world.tokenBalance(account), 0n, "the agent's account holds nothing after the revocation");
        assert.equal(await world.tokenBalance(person), before, "what it held went back to the person");
        const { words, txHash } = await sweepAudited(allowanceId);
        assert.equal(words, "0.01 USDC sent back to your wallet from the agent's account of an allowance that stopped");
        const sweep = await db().relayedTransaction.findUniqueOrThrow({ where: { hash: txHash } });
        assert.deepEqual([sweep.purpose, sweep.status], ["sweep", "landed"], "a sweep of its own in the relayer's ledger");
        assert.ok((await db().agentAccount.findUniqueOrThrow({ where: { allowanceId } })).returnedAt, "nothing more to send back");

        const next = await payX402(agent, credentialId, (await merchant(world.recipient())).required);
        assert.equal(next.header, null, "nothing is signed without the person");
        assert.equal(next.allowance_id, null);
        assert.equal(await db().allowanceSpend.count({ where: { allowanceId } }), 1, "no funding after the revocation");
        // the authorization signed before the revocation can no longer be settled: the account holds nothing
        const response = await fetch(first.url, { headers: { [unused.header!]: unused.value! } });
        assert.equal(response.status, 402);
        assert.equal(await world.tokenBalance(getAddress(unused.payee)), 0n);
      });
    });

    it("an allowance that expired with a balance in the agent's account: reconciliation sends it back", async () => {
      const { payX402 } = await import("@/lib/x402/pay");
      const { db } = await import("@/lib/db");
      const { reconcilePayments } = await import("@/lib/allowances/reconcile");
      const { agent, credentialId, allowanceId, person } = await anyPayee();
      const before = await world.tokenBalance(person);
      await world.chain.miningEvery(2000, async () => {
        assert.ok((await payX402(agent, credentialId, (await merchant(world.recipient())).required)).header);
        const account = await accountOf(allowanceId);
        await reconcilePayments();
        assert.equal(await world.tokenBalance(account), PRICE, "a live allowance's account keeps what its payments need");
        // ended an hour ago, past the margin the chain's clock may run off ours: dead on chain, never revoked
        await db().allowance.update({ where: { id: allowanceId }, data: { expiresAt: new Date(Date.now() - 3_600_000) } });
        await reconcilePayments();
        assert.equal(await world.tokenBalance(account), 0n);
        assert.equal(await world.tokenBalance(person), before);
        assert.match((await sweepAudited(allowanceId)).words, /^0\.01 USDC sent back to your wallet/);
      });
    });

    it("a sweep the node never got is sent again by reconciliation and lands; one never sent is sent by its next pass", async () => {
      const { payX402 } = await import("@/lib/x402/pay");
      const { db } = await import("@/lib/db");
      const { reconcilePayments } = await import("@/lib/allowances/reconcile");
      /** The node answers 503 to a broadcast to the token (the sweep's), before it sees it. */
      const toToken = (calls: ProxiedCall[]) =>
        calls.some(
          (call) =>
            call.method === "eth_sendRawTransaction" &&
            parseTransaction(call.params![0] as Hex).to?.toLowerCase() === world.token.toLowerCase(),
        );
      /** Reconciliation's passes, as the server runs them every 15 s, until the account is marked returned. */
      const reconciledUntilReturned = async (allowanceId: string) => {
        for (let pass = 0; pass < 10; pass += 1) {
          await reconcilePayments();
          if ((await db().agentAccount.findUniqueOrThrow({ where: { allowanceId } })).returnedAt) return;
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
        assert.fail("the agent account was never returned");
      };
      await world.chain.miningEvery(2000, async () => {
        // the broadcast fails: its ledger row waits, and reconciliation broadcasts the same bytes again
        const lost = await anyPayee();
        const before = await world.tokenBalance(lost.person);
        assert.ok((await payX402(lost.agent, lost.credentialId, (await merchant(world.recipient())).required)).header);
        const account = await accountOf(lost.allowanceId);
        proxy.fault = (calls) => (toToken(calls) ? { status: 503 } : undefined);
        await revoke(lost.allowanceId, lost.personKey);
        proxy.fault = undefined;
        assert.equal(await world.tokenBalance(account), PRICE, "the sweep did not reach the node");
        const { txHash } = await sweepAudited(lost.allowanceId);
        assert.equal((await db().relayedTransaction.findUniqueOrThrow({ where: { hash: txHash } })).status, "sent");
        await reconciledUntilReturned(lost.allowanceId);
        assert.equal(await world.tokenBalance(account), 0n);
        assert.equal(await world.tokenBalance(lost.person), before, "it went back to the person");
        assert.equal((await db().relayedTransaction.findUniqueOrThrow({ where: { hash: txHash } })).status, "landed");

        // the node refuses every read of the account's balance at the revocation: no sweep is sent then, one is later
        const unread = await anyPayee();
        assert.ok((await payX402(unread.agent, unread.credentialId, (await merchant(world.recipient())).required)).header);
        const unreadAccount = await accountOf(unread.allowanceId);
        const balanceRead = `0x70a08231${unreadAccount.slice(2).toLowerCase().padStart(64, "0")}`;
        proxy.fault = (calls) =>
          calls.some((call) => call.method === "eth_call" && JSON.stringify(call.params).toLowerCase().includes(balanceRead))
            ? { status: 503 }
            : undefined;
        await revoke(unread.allowanceId, unread.personKey);
        proxy.fault = undefined;
        assert.equal(await world.tokenBalance(unreadAccount), PRICE, "nothing was swept at the revocation");
        assert.equal(await db().relayedTransaction.count({ where: { allowanceId: unread.allowanceId, purpose: "sweep" } }), 0);
        await reconciledUntilReturned(unread.allowanceId);
        assert.equal(await world.tokenBalance(unreadAccount), 0n, "the next pass swept it");
        assert.match((await sweepAudited(unread.allowanceId)).words, /^0\.01 USDC sent back to your wallet/);
      });
    });
  });
}
