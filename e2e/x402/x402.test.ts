// x402 payments within an allowance, with real parts: a hardhat chain with the Delegation Framework and Circle's
// USDC, a resource paid through the real `@x402/express` middleware and `@metamask/x402`'s erc7710 server scheme, and
// the erc7710 facilitator of e2e/support, which simulates and sends DelegationManager.redeemDelegations. The person
// signed a USDC allowance with their own key; every payment below is signed by the delegate key with no tap, but
// those the allowance does not pay: they go to the person as the one-tap eip3009 request an `approve` credential
// makes, settled by the real `@x402/evm` facilitator once the person signed. The chain mines each transaction as it
// arrives, but in one case that runs on 2-second blocks, the facilitator's redemption waiting in the mempool.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { encodeFunctionData, erc20Abi, type Address } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";
import type { FacilitatorClient } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import {
  assertConcurrentPaymentsWithinTheCap,
  assertBadRequirementsRefused,
  assertHoldsSummedExactly,
  assertChangedPolicyApplies,
  assertPaidOnTwoSecondBlocks,
  assertRememberedAllowancesFollowChanges,
  assertTransferCounted,
  startX402World,
  type X402World,
} from "../support/x402";
import { startEip3009Facilitator } from "../support/x402-eip3009";
import { startPaidResource, type PaidResource } from "../support/x402-resource";
import type { ToolOutput } from "@/contract";

const PRICE = 10_000n; // 0.01 USDC

describe("x402 payments within an allowance", { timeout: 300_000 }, () => {
  let world: X402World;
  let eip3009: FacilitatorClient;
  const resources: PaidResource[] = [];

  before(async () => {
    world = await startX402World("sqlite");
    eip3009 = await startEip3009Facilitator(world.chain);
  });
  after(async () => {
    for (const resource of resources) await resource.close();
    await world?.stop();
  });

  async function resourceFor(payTo: Address, description = "Today's market report", transfer: "erc7710" | "eip3009" = "erc7710") {
    const resource = await startPaidResource({
      facilitator: transfer === "eip3009" ? eip3009 : world.facilitator,
      transfer,
      chainId: world.chain.chainId,
      token: world.token,
      payTo,
      amount: PRICE,
      description,
    });
    resources.push(resource);
    return resource;
  }

  /** The resource's 402: its PAYMENT-REQUIRED header value. */
  async function requirementOf(resource: PaidResource): Promise<string> {
    const response = await fetch(resource.url);
    assert.equal(response.status, 402);
    const header = response.headers.get("payment-required");
    assert.ok(header, "the 402 carries a PAYMENT-REQUIRED header");
    return header;
  }

  /** An agent whose allowance pays a new payee 0.025 USDC a day, and the requirement of that payee's resource (0.01 USDC). */
  async function payingForReports() {
    const payee = world.recipient();
    const holder = await world.agentWithAllowance({ payees: [payee], perPeriod: 25_000n });
    return { ...holder, payee, required: await requirementOf(await resourceFor(payee)) };
  }

  const decoded = (value: string) => JSON.parse(Buffer.from(value, "base64").toString("utf8")) as PaymentPayload;

  /**
   * What the person does on the approval page, with their own key: signs the request's typed data; the payment to send
   * back is then the one the approval stores for get_request.
   */
  async function signedByPerson(requestId: string, person: PrivateKeyAccount) {
    const { db } = await import("@/lib/db");
    const { payloadOf, x402PaymentValue } = await import("@/lib/wallet/request-payload");
    const row = await db().agentRequest.findUniqueOrThrow({ where: { id: requestId } });
    const payload = payloadOf(row);
    assert.ok(payload.kind === "sign_typed_data" && payload.x402, "a one-tap x402 payment");
    return x402PaymentValue(payload.x402, await person.signTypedData(payload.typedData as never));
  }

  /** The one-tap request pay_x402 answered: pending with the person, nothing signed or held yet, and why. */
  async function askedOfPerson(answer: ToolOutput<"pay_x402">, allowanceId: string) {
    const { db } = await import("@/lib/db");
    assert.equal(answer.header, null);
    assert.equal(answer.allowance_id, null);
    assert.ok(answer.request_id && answer.approval_url);
    const row = await db().agentRequest.findUniqueOrThrow({ where: { id: answer.request_id } });
    assert.equal(row.status, "pending");
    assert.equal(row.kind, "sign_typed_data");
    assert.equal(await db().x402Payment.count({ where: { allowanceId } }), 0, "nothing was signed within the allowance");
    return { requestId: answer.request_id, reason: row.reason ?? "" };
  }

  it("pays twice with no tap, the payee receives the token, and the third over the cap is refused with nothing signed", async () => {
    const { payX402, X402AllowanceRefusal } = await import("@/lib/x402/pay");
    const { db } = await import("@/lib/db");
    const payee = world.recipient();
    const { agent, credentialId, allowanceId } = await world.agentWithAllowance({ payees: [payee], perPeriod: 25_000n });
    const resource = await resourceFor(payee);

    for (const round of [1, 2]) {
      const paid = await payX402(agent, credentialId, await requirementOf(resource));
      assert.equal(paid.header, "PAYMENT-SIGNATURE");
      assert.equal(paid.payee, payee);
      assert.equal(paid.paid.amount, String(PRICE));
      assert.equal(paid.paid.formatted, "0.01");
      assert.equal(paid.paid.symbol, "USDC");
      assert.equal(paid.resource.url, resource.url);
      assert.equal(paid.resource.description, "Today's market report");
      const response = await fetch(resource.url, { headers: { [paid.header!]: paid.value! } });
      assert.equal(response.status, 200, world.facilitator.lastRefusal() ?? undefined);
      assert.deepEqual(await response.json(), { report: "paid content" });
      assert.equal(await world.tokenBalance(payee), PRICE * BigInt(round));
    }

    const third = await requirementOf(resource);
    await assert.rejects(payX402(agent, credentialId, third), (error: unknown) => {
      assert.ok(error instanceof X402AllowanceRefusal);
      const over = new RegExp(
        "^0\\.01 USDC is over your allowance of 0\\.025 USDC a day; 0\\.005 USDC left until it resets " +
          "(at|on \\d+ \\w+ at) \\d\\d:\\d\\d UTC\\. Nothing was signed\\.$",
      );
      assert.match(error.message, over);
      assert.equal(error.left?.available, "5000");
      return true;
    });
    assert.equal(await db().x402Payment.count({ where: { allowanceId } }), 2, "nothing was signed for the third");
    // settled: the chain counts them, the holds are released at the next payment's look
    assert.deepEqual((await db().x402Payment.findMany({ where: { allowanceId } })).map((row) => row.status).sort(), ["settled", "settled"]);
    // with their holds released, the chain's word on what is left is read again, not what the first payment read
    await assert.rejects(payX402(agent, credentialId, third), X402AllowanceRefusal);
    assert.equal(await db().x402Payment.count({ where: { allowanceId } }), 2, "nothing was signed for the fourth");
    const audited = await db().auditEvent.findMany({ where: { userId: agent.userId, type: "allowance.spent" } });
    assert.equal(audited.length, 2);
    const data = JSON.parse(audited[0].data) as Record<string, string>;
    assert.equal(data.resource, resource.url);
    assert.equal(data.recipient, payee);
    assert.equal(data.amount, `${PRICE} of token ${world.token}`);
  });

  it("on 2-second blocks the resource answers once the redemption landed a block later, and the next payment counts it once", async () => {
    await assertPaidOnTwoSecondBlocks(world);
  });

  it("a payment never settled holds its amount until its leaf has expired", async () => {
    const { payX402, X402AllowanceRefusal } = await import("@/lib/x402/pay");
    const { db } = await import("@/lib/db");
    const { agent, credentialId, allowanceId, required } = await payingForReports();
    await payX402(agent, credentialId, required);
    await payX402(agent, credentialId, required);
    // neither was sent to the resource: the chain still says 0.025 USDC is left, the holds say 0.005
    await assert.rejects(payX402(agent, credentialId, required), X402AllowanceRefusal);
    // past the leaves' expiry (120 s, and a minute's margin for the chain's clock) they can no longer be redeemed
    const later = () => new Date(Date.now() + 10 * 60_000);
    const paid = await payX402(agent, credentialId, required, later);
    assert.equal(paid.paid.amount, String(PRICE));
    assert.deepEqual((await db().x402Payment.findMany({ where: { allowanceId } })).map((row) => row.status).sort(), [
      "expired",
      "expired",
      "held",
    ]);
  });

  it("a transfer from the allowance counts what signed x402 payments hold, before anything is sent", async () => {
    const { payX402 } = await import("@/lib/x402/pay");
    const { AllowanceRefusal, spendFromAllowance } = await import("@/lib/allowances/spend");
    const { agent, credentialId, allowanceId, payee, required } = await payingForReports();
    await payX402(agent, credentialId, required);
    await payX402(agent, credentialId, required);
    // the chain still says 0.025 USDC is left; the two signed payments hold 0.02 of it
    const transfer = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [payee, 10_000n] });
    await assert.rejects(spendFromAllowance(allowanceId, { to: world.token, value: 0n, data: transfer }), (error: unknown) => {
      assert.ok(error instanceof AllowanceRefusal);
      assert.equal(error.reason, "over_cap");
      assert.equal(error.left?.available, "5000");
      return true;
    });
    assert.equal(await world.tokenBalance(payee), 0n, "nothing was sent");
  });

  it("a payment after a transfer from the same allowance counts what the transfer spent on chain", async () => {
    await assertTransferCounted(world, async (payee) => requirementOf(await resourceFor(payee)));
  });

  it("pays from the allowances the process remembers only while they stand: a paused one pays nothing, a newer one pays", async () => {
    await assertRememberedAllowancesFollowChanges(world, async (payee) => requirementOf(await resourceFor(payee)));
  });

  it("applies the person's changed policy to the very next payment", async () => {
    await assertChangedPolicyApplies(world, async (payee) => requirementOf(await resourceFor(payee)));
  });

  it("a transfer of the allowance still in flight counts against what is left until it is mined, then pays", async () => {
    const { payX402 } = await import("@/lib/x402/pay");
    const { db } = await import("@/lib/db");
    const { AppError } = await import("@/lib/http/errors");
    const { deployer } = await import("../support/contracts");
    const { agent, credentialId, allowanceId, payee, required } = await payingForReports();
    await payX402(agent, credentialId, required);
    // A transfer sent and not mined yet, as a spend whose receipt did not come in time leaves it: its row written with
    // the allowance's version moved, as the send writes them (lib/allowances/spend.ts).
    const mining = (on: boolean) => world.chain.client.request({ method: "evm_setAutomine" as never, params: [on] as never });
    await mining(false);
    let stateVersion: number;
    try {
      const hash = await (await deployer(world.chain)).sendTransaction({ to: payee, value: 1n });
      const { delegations } = await db().allowance.findUniqueOrThrow({ where: { id: allowanceId }, include: { delegations: true } });
      const delegationHash = delegations.find((row) => row.token?.toLowerCase() === world.token.toLowerCase())!.hash;
      // 10000 of the 15000 the first payment left: the second payment of 10000 does not fit while it is in flight
      const spend = { id: "sp_in_flight", allowanceId, delegationHash, recipient: payee, token: world.token, amount: "10000" };
      [, { stateVersion }] = await db().$transaction([
        db().allowanceSpend.create({ data: { ...spend, status: "sent", txHash: hash } }),
        db().allowance.update({ where: { id: allowanceId }, data: { stateVersion: { increment: 1 } } }),
      ]);
      await assert.rejects(payX402(agent, credentialId, required), (error: unknown) => {
        assert.ok(error instanceof AppError);
        assert.equal(error.code, "allowance_refused");
        assert.match(error.message, /Nothing was signed\.$/);
        return true;
      });
      assert.equal(await db().x402Payment.count({ where: { allowanceId } }), 1, "nothing was signed while it was in flight");
    } finally {
      await world.chain.client.request({ method: "evm_mine" as never, params: [] as never });
      await mining(true);
    }
    const paid = await payX402(agent, credentialId, required);
    assert.equal(paid.paid.amount, String(PRICE));
    assert.equal((await db().allowanceSpend.findUniqueOrThrow({ where: { id: "sp_in_flight" } })).status, "landed");
    const moved = await db().allowance.findUniqueOrThrow({ where: { id: allowanceId } });
    assert.ok(moved.stateVersion > stateVersion, "the transfer's landing moved the allowance's version");
  });

  it("refuses a payee off the allowance's list before anything is signed, when the resource takes no one-tap payment", async () => {
    const { payX402 } = await import("@/lib/x402/pay");
    const { X402NotPayableError } = await import("@/lib/x402/choose");
    const { agent, credentialId, allowanceId } = await world.agentWithAllowance({ payees: [world.recipient()], perPeriod: 25_000n });
    const stranger = await resourceFor(world.recipient());
    await assert.rejects(payX402(agent, credentialId, await requirementOf(stranger)), (error: unknown) => {
      assert.ok(error instanceof X402NotPayableError);
      assert.match(error.message, /is not among the allowance's recipients\. Nothing was signed\.$/);
      return true;
    });
    const { db } = await import("@/lib/db");
    assert.equal(await db().x402Payment.count({ where: { allowanceId } }), 0);
  });

  it("a payee off the allowance's list goes to the person as one tap, saying why; their signature pays the resource", async () => {
    const { payX402 } = await import("@/lib/x402/pay");
    const listed = world.recipient();
    const { agent, credentialId, allowanceId, person, personKey } = await world.agentWithAllowance({
      payees: [listed],
      perPeriod: 25_000n,
    });
    const stranger = world.recipient();
    const resource = await resourceFor(stranger, "A stranger's report", "eip3009");
    const answer = await payX402(agent, credentialId, await requirementOf(resource));
    assert.equal(answer.payee, stranger);
    assert.equal(answer.paid.formatted, "0.01");
    const { requestId, reason } = await askedOfPerson(answer, allowanceId);
    assert.ok(await world.chain.client.getCode({ address: person }), "the wallet runs the DeleGator its allowance needs");
    assert.equal(reason, `No live allowance covers USDC to ${stranger} here. It waits for your approval; approved, your wallet pays it.`);

    const payment = await signedByPerson(requestId, personKey);
    assert.equal(payment.header, "PAYMENT-SIGNATURE");
    const response = await fetch(resource.url, { headers: { [payment.header]: payment.value } });
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal(await world.tokenBalance(stranger), PRICE);
    assert.equal(await world.tokenBalance(person), 1_000_000n - PRICE, "paid from the person's wallet");
  });

  it("above the cap the person's choice holds: `ask` sends the payment to them as one tap, `refuse` refuses it", async () => {
    const { payX402, X402AllowanceRefusal } = await import("@/lib/x402/pay");
    const { db } = await import("@/lib/db");
    /** A requirement offering both ways to pay `payee`: from an allowance (erc7710), or by one tap (eip3009). */
    async function eitherWay(payee: Address) {
      const byDelegation = decoded(await requirementOf(await resourceFor(payee)));
      const oneTap = await resourceFor(payee, "A report paid either way", "eip3009");
      const required = decoded(await requirementOf(oneTap)) as unknown as { accepts: unknown[] };
      required.accepts = [(byDelegation as unknown as { accepts: unknown[] }).accepts[0], ...required.accepts];
      return { resource: oneTap, required: Buffer.from(JSON.stringify(required)).toString("base64") };
    }

    const shop = world.recipient();
    const asking = await world.agentWithAllowance({ payees: [shop], perPeriod: 5_000n, overLimit: "ask" });
    const { resource, required } = await eitherWay(shop);
    const { requestId, reason } = await askedOfPerson(await payX402(asking.agent, asking.credentialId, required), asking.allowanceId);
    assert.equal(
      reason,
      "0.01 USDC is over your allowance of 0.005 USDC a day. It waits for your approval; approved, your wallet pays it.",
    );
    const payment = await signedByPerson(requestId, asking.personKey);
    assert.equal((await fetch(resource.url, { headers: { [payment.header]: payment.value } })).status, 200);
    assert.equal(await world.tokenBalance(shop), PRICE);

    const refusing = await world.agentWithAllowance({ payees: [shop], perPeriod: 5_000n, overLimit: "refuse" });
    const requestsBefore = await db().agentRequest.count({ where: { grantId: refusing.agent.grantId } });
    await assert.rejects(payX402(refusing.agent, refusing.credentialId, (await eitherWay(shop)).required), (error: unknown) => {
      assert.ok(error instanceof X402AllowanceRefusal);
      assert.equal(error.message, "0.01 USDC is over your allowance of 0.005 USDC a day. Nothing was signed.");
      return true;
    });
    assert.equal(
      await db().agentRequest.count({ where: { grantId: refusing.agent.grantId } }),
      requestsBefore,
      "nothing asked of the person",
    );
  });

  it("above the most an any-payee allowance pays at once, `ask` sends the payment to the person", async () => {
    const { payX402 } = await import("@/lib/x402/pay");
    const { agent, credentialId, allowanceId } = await world.agentWithAllowance({
      payees: [],
      perPeriod: 25_000n,
      anyPayee: 5_000n,
      overLimit: "ask",
    });
    const answer = await payX402(agent, credentialId, await requirementOf(await resourceFor(world.recipient(), "A report", "eip3009")));
    const { reason } = await askedOfPerson(answer, allowanceId);
    assert.equal(
      reason,
      "0.01 USDC is above the 0.005 USDC this allowance pays any payee at once. It waits for your approval; approved, your wallet pays it.",
    );
  });

  it("a paused allowance sends the payment to the person, saying so", async () => {
    const { payX402 } = await import("@/lib/x402/pay");
    const { db } = await import("@/lib/db");
    const shop = world.recipient();
    const { agent, credentialId, allowanceId } = await world.agentWithAllowance({ payees: [shop], perPeriod: 25_000n });
    await db().allowance.update({ where: { id: allowanceId }, data: { status: "suspended" } });
    const answer = await payX402(agent, credentialId, await requirementOf(await resourceFor(shop, "A report", "eip3009")));
    const { reason } = await askedOfPerson(answer, allowanceId);
    assert.equal(
      reason,
      "This wallet's allowance is paused until you review it on Clients. It waits for your approval; approved, your wallet pays it.",
    );
  });

  it("refuses a requirement on a chain the grant does not allow", async () => {
    const { payX402 } = await import("@/lib/x402/pay");
    const { X402NotPayableError } = await import("@/lib/x402/choose");
    const payee = world.recipient();
    const { agent, credentialId } = await world.agentWithAllowance({ payees: [payee], perPeriod: 25_000n });
    const required = JSON.parse(Buffer.from(await requirementOf(await resourceFor(payee)), "base64").toString("utf8"));
    required.accepts[0].network = "eip155:8453";
    await assert.rejects(
      payX402(agent, credentialId, Buffer.from(JSON.stringify(required)).toString("base64")),
      (error: unknown) => error instanceof X402NotPayableError && /chain 8453, which this wallet service does not use/.test(error.message),
    );
  });

  it("a payment altered after signing (amount or payee) fails at the facilitator's verify; unaltered it verifies", async () => {
    const { payX402 } = await import("@/lib/x402/pay");
    const payee = world.recipient();
    const other = world.recipient();
    const { agent, credentialId } = await world.agentWithAllowance({ payees: [payee, other], perPeriod: 25_000n });
    const paid = await payX402(agent, credentialId, await requirementOf(await resourceFor(payee)));
    const payload = decoded(paid.value!);
    const asked: PaymentRequirements = payload.accepted;
    assert.equal((await world.facilitator.verify(payload, asked)).isValid, true);
    for (const altered of [
      { ...asked, amount: String(PRICE + 1n) },
      { ...asked, payTo: other },
    ]) {
      const verdict = await world.facilitator.verify({ ...payload, accepted: altered }, altered);
      assert.equal(verdict.isValid, false);
      assert.equal(verdict.invalidReason, "erc7710_simulation_failed");
    }
    assert.equal(await world.tokenBalance(other), 0n);
  });

  it("pays a V1 requirement (402 body) with an X-PAYMENT value the facilitator settles", async () => {
    const { payX402 } = await import("@/lib/x402/pay");
    const payee = world.recipient();
    const { agent, credentialId } = await world.agentWithAllowance({ payees: [payee], perPeriod: 25_000n });
    const v2 = JSON.parse(Buffer.from(await requirementOf(await resourceFor(payee)), "base64").toString("utf8"));
    const entry = v2.accepts[0];
    const body = {
      x402Version: 1,
      error: "X-PAYMENT header is required",
      accepts: [
        {
          scheme: entry.scheme,
          network: entry.network,
          maxAmountRequired: entry.amount,
          resource: v2.resource.url,
          description: "A V1 resource",
          mimeType: "application/json",
          payTo: entry.payTo,
          maxTimeoutSeconds: entry.maxTimeoutSeconds,
          asset: entry.asset,
          extra: entry.extra,
        },
      ],
    };
    const paid = await payX402(agent, credentialId, body);
    assert.equal(paid.header, "X-PAYMENT");
    assert.equal(paid.resource.description, "A V1 resource");
    const v1 = JSON.parse(Buffer.from(paid.value!, "base64").toString("utf8"));
    assert.deepEqual(Object.keys(v1).sort(), ["network", "payload", "scheme", "x402Version"]);
    assert.equal(v1.x402Version, 1);
    const settled = await world.facilitator.settle({ x402Version: 1, accepted: entry, payload: v1.payload }, entry);
    assert.equal(settled.success, true, world.facilitator.lastRefusal() ?? undefined);
    assert.equal(await world.tokenBalance(payee), PRICE);
  });

  it("what the delegate key spends behind the service's back is seen within 30 s: the chain is asked again", async () => {
    const { payX402, X402AllowanceRefusal } = await import("@/lib/x402/pay");
    const { agent, credentialId, allowanceId, payee, required } = await payingForReports();
    await payX402(agent, credentialId, required);
    const stolen = await world.settleWithStolenKey(allowanceId, payee, 10_000n);
    assert.equal(stolen.success, true, "within the cap, the chain lets it through");
    // 0.015 USDC left on chain, 0.01 of it held by the payment signed above
    const later = () => new Date(Date.now() + 31_000);
    await assert.rejects(payX402(agent, credentialId, required, later), (error: unknown) => {
      assert.ok(error instanceof X402AllowanceRefusal);
      assert.equal(error.left?.available, "5000");
      return true;
    });
  });

  it("the delegate key taken by an attacker cannot pay past the cap or off the payee list on chain", async () => {
    const payee = world.recipient();
    const thief = world.recipient();
    const { allowanceId } = await world.agentWithAllowance({ payees: [payee], perPeriod: 25_000n });
    // signed with the server's own key, past every check of lib/x402: only the chain stands in the way
    const stolen = (to: Address, amount: bigint) => world.settleWithStolenKey(allowanceId, to, amount);
    const pastTheCap = await stolen(payee, 30_000n);
    assert.equal(pastTheCap.success, false);
    assert.equal(pastTheCap.errorReason, "erc7710_simulation_failed");
    const offTheList = await stolen(thief, 1_000n);
    assert.equal(offTheList.success, false);
    assert.equal(await world.tokenBalance(thief), 0n);
    assert.equal(await world.tokenBalance(payee), 0n);
  });

  it("revoking the client stops payments: refused at once, and one signed before no longer redeems", async () => {
    const { payX402 } = await import("@/lib/x402/pay");
    const { revokeForUser } = await import("@/lib/oauth/connected-clients");
    const { sendStoredRevocations } = await import("@/lib/allowances/revocation");
    const payee = world.recipient();
    const { agent, credentialId } = await world.agentWithAllowance({ payees: [payee], perPeriod: 25_000n });
    const resource = await resourceFor(payee);
    const signedBefore = await payX402(agent, credentialId, await requirementOf(resource));
    const stopped = await revokeForUser(agent.userId, agent.clientId);
    await sendStoredRevocations(stopped.allowanceIds);
    await assert.rejects(payX402(agent, credentialId, await requirementOf(resource)), /No way of paying this resource is covered/);
    const response = await fetch(resource.url, { headers: { [signedBefore.header!]: signedBefore.value! } });
    assert.equal(response.status, 402, "the allowance is disabled on chain: the leaf derived from it no longer redeems");
    assert.equal(await world.tokenBalance(payee), 0n);
  });

  it("20 concurrent payments never sign more than the cap", async () => {
    await assertConcurrentPaymentsWithinTheCap(world, async (payee) => requirementOf(await resourceFor(payee)));
  });

  it("sums what the holds hold exactly, with amounts of every size", async () => {
    await assertHoldsSummedExactly(world);
  });

  it("refuses a requirement in no token it can read, or of 2^256 or more, on every path, writing and holding nothing", async () => {
    await assertBadRequirementsRefused(world);
  });

  it("counts amounts past 64 bits exactly: a payment one base unit over what is left of 10^19 is refused", async () => {
    const { payX402, X402AllowanceRefusal } = await import("@/lib/x402/pay");
    const large = 10n ** 19n;
    const payee = world.recipient();
    const { agent, credentialId } = await world.agentWithAllowance({ payees: [payee], perPeriod: large + 100n });
    // as a resource would ask (nothing is redeemed here: each payment only holds its amount)
    const asking = (amount: bigint) =>
      Buffer.from(
        JSON.stringify({
          x402Version: 2,
          resource: { url: "https://api.example.test/large", description: "A large payment" },
          accepts: [
            {
              scheme: "exact",
              network: `eip155:${world.chain.chainId}`,
              amount: amount.toString(),
              asset: world.token,
              payTo: payee,
              maxTimeoutSeconds: 120,
              extra: { name: "USD Coin", version: "2", assetTransferMethod: "erc7710", facilitatorAddresses: [world.facilitator.address] },
            },
          ],
        }),
      ).toString("base64");
    await payX402(agent, credentialId, asking(1n));
    // 10^19 + 101 and 10^19 + 100 are the same number as a 64-bit float: only an exact sum refuses it
    await assert.rejects(payX402(agent, credentialId, asking(large + 100n)), (error: unknown) => {
      assert.ok(error instanceof X402AllowanceRefusal, String(error));
      assert.equal(error.left?.available, String(large + 99n));
      return true;
    });
    const paid = await payX402(agent, credentialId, asking(large + 99n));
    assert.equal(paid.paid.amount, String(large + 99n));
  });
});
