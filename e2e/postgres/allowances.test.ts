// Concurrent spends of one allowance on PostgreSQL: the lease that serializes them lives in the shared database,
// as it does for several instances. 50 concurrent spends near the cap: exactly as many land as fit, none reverts.
import { after, before, describe, it } from "node:test";
import { assertConcurrentSpendsNearTheCap, startAllowanceWorld, type AllowanceWorld } from "../support/allowances";

describe("allowances on PostgreSQL", { timeout: 300_000 }, () => {
  let world: AllowanceWorld;
  before(async () => {
    world = await startAllowanceWorld({ database: "postgres" });
  });
  after(() => world?.stop());

  it("lands exactly as many of 50 concurrent spends as fit under the cap, none reverting", async () => {
    await assertConcurrentSpendsNearTheCap(world);
  });
});
