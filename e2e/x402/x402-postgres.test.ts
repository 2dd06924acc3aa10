// x402 payments within an allowance on PostgreSQL: concurrent payments of one allowance take turns under its lease
// across connections, so never more is signed than its cap, a transfer moves what an earlier payment read of the
// chain, and on 2-second blocks a payment settled a block later is counted once (the SQLite run is x402.test.ts).
import { after, before, describe, it } from "node:test";
import type { Address } from "viem";
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

describe("x402 payments within an allowance (PostgreSQL)", { timeout: 300_000 }, () => {
  let world: X402World;

  before(async () => {
    world = await startX402World("postgres");
  });
  after(() => world?.stop());
  const requirement = async (payee: Address) => (await world.report(payee)).required;

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

  it("refuses a requirement in no token it can read, or of 2^256 or more, on every path, writing and holding nothing", async () => {
    await assertBadRequirementsRefused(world);
  });

  it("on 2-second blocks the resource answers once the redemption landed a block later, and the next payment counts it once", async () => {
    await assertPaidOnTwoSecondBlocks(world);
  });
});
