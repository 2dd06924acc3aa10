// A person's gas budget on PostgreSQL, where several instances share it: concurrent payments from two of the person's
// allowances are checked and recorded under the relayer's lease in the shared database, so the relayer never pays more
// gas for them than ALLOWANCE_GAS_BUDGET.
import { after, before, describe, it } from "node:test";
import { assertConcurrentSpendsWithinTheBudget, startAllowanceWorld, type AllowanceWorld } from "../support/allowances";

const BUDGET = 1_500_000n;

describe("the relayer's gas budget on PostgreSQL", { timeout: 300_000 }, () => {
  let world: AllowanceWorld;
  before(async () => {
    world = await startAllowanceWorld({ database: "postgres", env: { ALLOWANCE_GAS_BUDGET: String(BUDGET) } });
  });
  after(() => world?.stop());

  it("of sixteen concurrent payments from two allowances, only those within the person's budget are sent", async () => {
    await assertConcurrentSpendsWithinTheBudget(world, BUDGET);
  });
});
