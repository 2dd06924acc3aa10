// x402 payments within an allowance on PostgreSQL: concurrent payments of one allowance take turns under its lease
// across connections, so never more is signed than its cap (the SQLite run is x402.test.ts).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { assertConcurrentPaymentsWithinTheCap, assertHoldsSummedExactly, startX402World, type X402World } from "../support/x402";
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

  it("20 concurrent payments never sign more than the cap", async () => {
    await assertConcurrentPaymentsWithinTheCap(world, async (payee) => {
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
    });
  });

  it("sums what the holds hold exactly, with amounts of every size", async () => {
    await assertHoldsSummedExactly(world);
  });
});
