// x402 payments within an allowance on PostgreSQL: concurrent payments of one allowance take turns under its lease
// across connections, so never more is signed than its cap, and a transfer moves what an earlier payment read of the
// chain (the SQLite run is x402.test.ts).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Address } from "viem";
import {
  assertConcurrentPaymentsWithinTheCap,
  assertHoldsSummedExactly,
  assertChangedPolicyApplies,
  assertRememberedAllowancesFollowChanges,
  assertTransferCounted,
  startX402World,
  type X402World,
} from "../support/x402";
import { startPaidResource, type PaidResource } from "../support/x402-resource";

describe("x402 payments within an allowance (PostgreSQL)", { timeout: 300_000 }, () => {
  let world: X402World;
  const resources: PaidResource[] = [];

  before(async () => {
    world = await startX402World("postgres");
  });
  after(async () => {
    for (const resource of resources) await resource.close();
    await world?.stop();
  });

  /** A resource selling a report for 0.01 USDC to `payee`: the PAYMENT-REQUIRED its first answer carries. */
  async function requirement(payee: Address) {
    const resource = await startPaidResource({
      facilitator: world.facilitator,
      chainId: world.chain.chainId,
      token: world.token,
      payTo: payee,
      amount: 10_000n,
      description: "A paid report",
    });
    resources.push(resource);
    const response = await fetch(resource.url);
    assert.equal(response.status, 402);
    return response.headers.get("payment-required")!;
  }

  it("20 concurrent payments never sign more than the cap", async () => {
    await assertConcurrentPaymentsWithinTheCap(world, requirement);
  });

  it("a payment after a transfer from the same allowance counts what the transfer spent on chain", async () => {
    await assertTransferCounted(world, requirement);
  });

  it("pays from the allowances the process remembers only while they stand: a paused one pays nothing, a newer one pays", async () => {
    await assertRememberedAllowancesFollowChanges(world, requirement);
  });

  it("applies the person's changed policy to the very next payment", async () => {
    await assertChangedPolicyApplies(world, requirement);
  });

  it("sums what the holds hold exactly, with amounts of every size", async () => {
    await assertHoldsSummedExactly(world);
  });
});
