// An allowance for any payee (issue 43), with real parts: the hardhat chain with the Delegation Framework and Circle's
// USDC, resources paid through the real `@x402/express` middleware and the erc7710 facilitator of e2e/support. The
// person signed 0.05 USDC a day to anyone, each payment at most 0.015 USDC: the agent pays two payees with no tap; a
// payment above the most per payment is refused before anything is signed, as an x402 payment and as a transfer; and
// the delegate key in an attacker's hands can pay anyone, but never past the cap the chain holds.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { encodeFunctionData, erc20Abi, type Address } from "viem";
import { startX402World, type X402World } from "../support/x402";
import { startPaidResource, type PaidResource } from "../support/x402-resource";

const PRICE = 10_000n; // 0.01 USDC
const CAP = 50_000n; // 0.05 USDC a day
const MOST = 15_000n; // 0.015 USDC a payment

describe("an allowance for any payee", { timeout: 300_000 }, () => {
  let world: X402World;
  const resources: PaidResource[] = [];

  before(async () => {
    world = await startX402World("sqlite");
  });
  after(async () => {
    for (const resource of resources) await resource.close();
    await world?.stop();
  });

  async function requirementFor(payTo: Address, amount = PRICE): Promise<{ resource: PaidResource; header: string }> {
    const resource = await startPaidResource({
      facilitator: world.facilitator,
      chainId: world.chain.chainId,
      token: world.token,
      payTo,
      amount,
      description: "A report",
    });
    resources.push(resource);
    const response = await fetch(resource.url);
    assert.equal(response.status, 402);
    return { resource, header: response.headers.get("payment-required")! };
  }

  it("pays two payees it never named with no tap, and refuses a payment above the most per payment with nothing signed", async () => {
    const { payX402 } = await import("@/lib/x402/pay");
    const { X402NotPayableError } = await import("@/lib/x402/choose");
    const { db } = await import("@/lib/db");
    const { agent, credentialId, allowanceId } = await world.agentWithAllowance({ payees: [], perPeriod: CAP, anyPayee: MOST });
    const stored = await db().allowanceDelegation.findMany({ where: { allowanceId } });
    assert.deepEqual(
      stored.map((row) => row.perPaymentMax),
      [String(MOST)],
      "one delegation for the token, with the server's most per payment",
    );

    for (const payee of [world.recipient(), world.recipient()]) {
      const { resource, header } = await requirementFor(payee);
      const paid = await payX402(agent, credentialId, header);
      assert.equal(paid.payee, payee);
      const response = await fetch(resource.url, { headers: { [paid.header!]: paid.value! } });
      assert.equal(response.status, 200, world.facilitator.lastRefusal() ?? undefined);
      assert.equal(await world.tokenBalance(payee), PRICE);
    }

    const greedy = world.recipient();
    const { header } = await requirementFor(greedy, MOST + 1n);
    await assert.rejects(payX402(agent, credentialId, header), (error: unknown) => {
      assert.ok(error instanceof X402NotPayableError);
      assert.match(error.message, /above the most the allowance pays any payee at once \(15000 base units\)\. Nothing was signed\.$/);
      return true;
    });
    assert.equal(await db().x402Payment.count({ where: { allowanceId } }), 2, "nothing was signed for the third");
    assert.equal(await world.tokenBalance(greedy), 0n);
  });

  it("a transfer to anyone is paid up to the most per payment; above it the agent is refused in the person's units", async () => {
    const { payFromAllowance } = await import("@/lib/allowances/agent");
    const { db } = await import("@/lib/db");
    const { agent, credentialId, allowanceId } = await world.agentWithAllowance({ payees: [], perPeriod: CAP, anyPayee: MOST });
    const stranger = world.recipient();
    const transfer = (amount: bigint) => ({
      chainId: world.chain.chainId,
      to: world.token,
      value: "0",
      data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [stranger, amount] }),
    });
    const paid = await payFromAllowance(agent, credentialId, transfer(MOST), () => new Date());
    assert.ok("status" in paid && paid.status === "completed", JSON.stringify(paid));
    assert.equal(await world.tokenBalance(stranger), MOST);
    // the person chose `refuse` above the allowance: a tool error, and nothing held or sent
    await assert.rejects(
      payFromAllowance(agent, credentialId, transfer(MOST + 1n), () => new Date()),
      /^RequestError: 0\.015001 USDC is above the 0\.015 USDC this allowance pays any payee at once\.$/,
    );
    assert.equal(await world.tokenBalance(stranger), MOST);
    assert.equal(await db().allowanceSpend.count({ where: { allowanceId } }), 1);
  });

  it("the delegate key taken by an attacker can pay anyone, but never past the cap the chain holds, nor call anything else", async () => {
    const { findAllowance, parseStoredDelegation } = await import("@/lib/allowances/allowances");
    const { delegateAccount } = await import("@/lib/allowances/delegate-key");
    const { redeemCall } = await import("@/lib/allowances/spend");
    const { allowanceId } = await world.agentWithAllowance({ payees: [], perPeriod: CAP, anyPayee: MOST });
    const allowance = await findAllowance(allowanceId);
    const thief = world.recipient();
    // signed with the server's own key, past every check of lib/x402 (the most per payment is one of them)
    const stolen = (amount: bigint) => world.settleWithStolenKey(allowanceId, thief, amount);
    const pastTheCap = await stolen(CAP + 1n);
    assert.equal(pastTheCap.success, false);
    assert.equal(pastTheCap.errorReason, "erc7710_simulation_failed");
    // what the words say: anyone can be paid, up to the cap (above the most per payment, which only the server held)
    assert.equal((await stolen(CAP)).success, true, world.facilitator.lastRefusal() ?? undefined);
    assert.equal(await world.tokenBalance(thief), CAP);
    // and no more
    assert.equal((await stolen(1n)).success, false);
    assert.equal(await world.tokenBalance(thief), CAP);
    // without a recipient caveat the token's period enforcer still allows only transfer(): no approve to the thief
    const approve = encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [thief, CAP] });
    const data = redeemCall([parseStoredDelegation(allowance.delegations[0].signed)], {
      target: world.token,
      value: 0n,
      callData: approve,
    });
    const verdict = await world.chain.client
      .call({ account: (await delegateAccount()).address, to: world.framework.DelegationManager, data })
      .then(
        () => null,
        (error: Error) => error.message,
      );
    assert.match(String(verdict), /ERC20PeriodTransferEnforcer:invalid-method/);
  });
});
