// Paying a stock x402 merchant by permit2 with no tap (decision 0039), with real parts: the hardhat chain with the
// Delegation Framework, Uniswap's Permit2 and x402's exact proxy (permit2.ts), a plain ERC-20 without EIP-3009
// (OpenZeppelin's), a resource of `@x402/express`'s own middleware and `@x402/evm`'s exact scheme settled by its
// unmodified facilitator, and an agent whose person signed an allowance for any payee in that token. The allowance's
// agent account approves Permit2 once (its gas sent by the relayer), each payment is funded within the allowance, and
// the account signs x402's Permit2 witness transfer. Run on SQLite (agent-account-permit2.test.ts) and PostgreSQL
// (agent-account-permit2-postgres.test.ts).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { erc20Abi, getAddress, maxUint256, type Address } from "viem";
import type { FacilitatorClient } from "@x402/core/server";
import { deployErc20, deployer } from "./contracts";
import {
  assertConcurrentPaymentsWithinTheCap,
  assertRetryAnswersTheSamePayment,
  paidFromTheAccount,
  revokedAfterAnUnusedPayment,
  settledByTheMerchant,
} from "./agent-account-cases";
import type { Permit2Payload } from "@/lib/x402/answer";
import { deployPermit2 } from "./permit2";
import { requirementHeader, startX402World, type X402World } from "./x402";
import { startEip3009Facilitator } from "./x402-eip3009";
import { startPaidResourceAsking, type PaidResource } from "./x402-resource";

const UNIT = 10n ** 18n;
const PRICE = UNIT / 100n; // 0.01 TKN
const CAP = 5n * PRICE; // 0.05 TKN a day
const MOST = (3n * PRICE) / 2n; // 0.015 TKN a payment

export function agentAccountPermit2Suite(database: "sqlite" | "postgres") {
  describe(`x402 by permit2 at a stock merchant from the agent's account (${database})`, { timeout: 300_000 }, () => {
    let world: X402World;
    let facilitator: FacilitatorClient;
    let token: Address;
    const resources: PaidResource[] = [];

    before(async () => {
      world = await startX402World(database);
      await deployPermit2(world.chain);
      facilitator = await startEip3009Facilitator(world.chain);
      const holder = (await deployer(world.chain)).account.address;
      token = await deployErc20(world.chain, { name: "Plain Token", symbol: "TKN", supply: 1_000_000n * UNIT, holder });
    });
    after(async () => {
      for (const resource of resources) await resource.close();
      await world?.stop();
    });

    const balanceOf = (address: Address) =>
      world.chain.client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [address] });

    /** A stock merchant selling a report by permit2 to `payTo` for `amount`, and its PAYMENT-REQUIRED. */
    async function merchant(payTo: Address, amount = PRICE) {
      const sale = { facilitator, transfer: "permit2" as const, chainId: world.chain.chainId, token, payTo, amount };
      const { resource, required } = await startPaidResourceAsking({ ...sale, description: "A report" });
      resources.push(resource);
      return { url: resource.url, required };
    }

    const anyPayee = () =>
      world.agentWithAllowance({ payees: [], perPeriod: CAP, anyPayee: MOST, token: { address: token, holding: UNIT } });

    it("pays with no tap: Permit2 approved once, the facilitator settles, the merchant holds it, the allowance counts it", async () => {
      const { payX402 } = await import("@/lib/x402/pay");
      const { allowanceForAgent } = await import("@/lib/allowances/agent");
      const { PERMIT2, X402_EXACT_PERMIT2_PROXY } = await import("@/lib/wallet/permits");
      const { db } = await import("@/lib/db");
      const paying = await anyPayee();
      const { agent, credentialId, allowanceId } = paying;
      const payee = world.recipient();
      const sale = await merchant(payee);
      await world.chain.miningEvery(2000, async () => {
        const expect = { payee, price: PRICE, balanceOf };
        const { paid, account, payload } = await paidFromTheAccount(paying, sale, expect);
        // the permit2 payload @x402/evm's exact client builds: the witness transfer's fields as strings, and its signature
        const permit = (payload as { permit2Authorization: Permit2Payload["permit2Authorization"] }).permit2Authorization;
        assert.deepEqual(Object.keys(payload), ["permit2Authorization", "signature"]);
        assert.deepEqual(Object.keys(permit), ["from", "permitted", "spender", "nonce", "deadline", "witness"]);
        assert.equal(permit.from, account);
        assert.deepEqual(permit.permitted, { token, amount: String(PRICE) });
        assert.equal(permit.spender, X402_EXACT_PERMIT2_PROXY);
        assert.equal(permit.witness.to, payee);
        const allowed = await world.chain.client.readContract({
          address: token,
          abi: erc20Abi,
          functionName: "allowance",
          args: [account, PERMIT2],
        });
        assert.equal(allowed, maxUint256, "the account let Permit2 take the token");
        // the approval's two transactions are the relayer's ledger's, counted for the person: both landed
        const approval = await db().relayedTransaction.findMany({
          where: { allowanceId, purpose: "approval" },
          orderBy: { createdAt: "asc" },
        });
        assert.deepEqual(
          approval.map((row) => [getAddress(row.relayer) === account, row.status, row.userId !== null]),
          [
            [false, "landed", true],
            [true, "landed", true],
          ],
        );

        const gas = await settledByTheMerchant(paying, sale, paid, { ...expect, account, before: UNIT }, world.chain.client);
        const [allowance] = (await allowanceForAgent(agent, credentialId)).allowances;
        assert.equal(allowance.limits[0].left, "0.04", "the person's allowance counts the payment");

        const [gasSent, approve] = approval.map((row) => BigInt(row.gasUsed!));
        console.log(
          `gas: once per token, the relayer's transfer ${gasSent} and the account's approval ${approve}; per payment, funding ` +
            `${gas.funding}, settlement ${gas.settlement}, together ${gas.funding + gas.settlement}`,
        );

        // the next payment approves nothing again
        const again = await merchant(world.recipient());
        const next = await payX402(agent, credentialId, again.required);
        assert.equal((await fetch(again.url, { headers: { [next.header!]: next.value! } })).status, 200);
        assert.equal(await db().relayedTransaction.count({ where: { allowanceId, purpose: "approval" } }), 2);
      });
    });

    it("a retry with the call's idempotency key answers the same payment, funded and approved once", async () => {
      const { db } = await import("@/lib/db");
      const paying = await anyPayee();
      await assertRetryAnswersTheSamePayment(paying, await merchant(world.recipient()));
      const approval = await db().relayedTransaction.count({ where: { allowanceId: paying.allowanceId, purpose: "approval" } });
      assert.equal(approval, 2, "approved once");
    });

    it("says the payment in the person's words on its page and in the audit log, as an eip3009 one", async () => {
      const { payX402 } = await import("@/lib/x402/pay");
      const { paidWithoutTap } = await import("@/lib/x402/paid");
      const { listAuditEvents } = await import("@/lib/audit/query");
      const { namesFor, summarizeEvent } = await import("@/lib/audit/describe");
      const { tokenMetadata } = await import("@/lib/wallet/token-metadata");
      const { db } = await import("@/lib/db");
      const { agent, credentialId } = await anyPayee();
      const payee = world.recipient();
      const { required, url } = await merchant(payee);
      const paid = await payX402(agent, credentialId, required);
      // the payment's own event, with the funding's request (the funding's has none)
      const event = await db().auditEvent.findFirstOrThrow({
        where: { userId: agent.userId, type: "allowance.spent", requestId: { not: null } },
      });
      const page = await paidWithoutTap(agent.userId, event.requestId!, world.chain.chainId);
      assert.equal(page?.amount, "0.01 TKN");
      assert.equal(page?.payee, payee);
      assert.equal(page?.resource.url, paid.resource.url);
      assert.equal(page?.status, "held");
      const { events } = await listAuditEvents(agent.userId, {}, {});
      const read = async (chainId: number, address: Address) => {
        const metadata = await tokenMetadata(chainId, address);
        return metadata.standard === "erc20" ? metadata : null;
      };
      const names = await namesFor(agent.userId, events, {}, read);
      const spent = events.find((row) => row.type === "allowance.spent" && row.requestId)!;
      assert.equal(
        summarizeEvent(spent, names),
        `Paid 0.01 TKN to ${payee} for ${url} from the allowance, without a tap: signed for the merchant, who settles it on chain`,
      );
    });

    it("20 concurrent payments never pay past the cap: the chain's cap and the server's count agree", async () => {
      const paying = await anyPayee();
      const sales = await Promise.all(Array.from({ length: 20 }, () => merchant(world.recipient())));
      // on 2-second blocks: the first payment's approval takes two of them while the others wait for it
      const expect = { paying: Number(CAP / PRICE), cap: CAP, balanceOf };
      await assertConcurrentPaymentsWithinTheCap(paying, sales, expect, (work) => world.chain.miningEvery(2000, work));
    });

    it("after Revoke allowance the next payment is not paid from it, and its account's token goes back through Permit2", async () => {
      const { payX402 } = await import("@/lib/x402/pay");
      const { db } = await import("@/lib/db");
      const paying = await anyPayee();
      const { agent, credentialId, allowanceId } = paying;
      const first = await merchant(world.recipient());
      const mine = <T>(work: () => Promise<T>) => world.chain.miningEvery(2000, work);
      const { unused } = await revokedAfterAnUnusedPayment(paying, first, { price: PRICE, balanceOf }, mine);
      const row = await db().x402Payment.findFirstOrThrow({ where: { allowanceId } });
      assert.equal(row.status, "returned");
      const sweep = await db().relayedTransaction.findFirstOrThrow({
        where: { allowanceId, purpose: "sweep" },
        orderBy: { createdAt: "desc" },
      });
      assert.equal(sweep.status, "landed");
      console.log(`gas: the revocation's Permit2 transfer back ${sweep.gasUsed}`);

      // not from the allowance, nor by the person's tap: their wallet has not let Permit2 take the token
      await assert.rejects(payX402(agent, credentialId, (await merchant(world.recipient())).required), (error: unknown) => {
        assert.equal((error as { code?: string }).code, "payment_not_payable", String(error));
        return true;
      });
      assert.equal(await db().allowanceSpend.count({ where: { allowanceId } }), 1, "no funding after the revocation");
      // the transfer signed before the revocation can no longer be settled: the account holds nothing
      const response = await fetch(first.url, { headers: { [unused.header!]: unused.value! } });
      assert.equal(response.status, 402);
      assert.equal(await balanceOf(getAddress(unused.payee)), 0n);
    });

    it("a permit2 offer in an address with no code, or a contract that is no ERC-20, is refused, nothing funded", async () => {
      const { payX402 } = await import("@/lib/x402/pay");
      const { X402RequirementError } = await import("@/lib/x402/requirement");
      const { db } = await import("@/lib/db");
      const { agent, credentialId, allowanceId } = await anyPayee();
      for (const asset of [world.recipient(), world.framework.DelegationManager]) {
        const offer = { chainId: world.chain.chainId, asset, amount: String(PRICE), payTo: world.recipient() };
        const asked = requirementHeader({ ...offer, extra: { assetTransferMethod: "permit2" } });
        await assert.rejects(payX402(agent, credentialId, asked), (error: unknown) => {
          assert.ok(error instanceof X402RequirementError, String(error));
          assert.match(error.message, new RegExp(`asks to be paid in ${asset} on chain \\d+, which is no token Agent Wallet can read`));
          return true;
        });
      }
      assert.equal(await db().allowanceSpend.count({ where: { allowanceId } }), 0, "nothing was funded");
      assert.equal(await db().agentAccount.count({ where: { allowanceId } }), 0, "no account was made");
    });
  });
}
