// Concurrent spends of one allowance on PostgreSQL: the lease that serializes them lives in the shared database,
// as it does for several instances. 50 concurrent spends near the cap: exactly as many land as fit, none reverts.
// Two instances resending a stored revocation that did not land at once: one claims it, it is sent and audited once.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  assertConcurrentAgentPaymentsNearTheCap,
  assertAgentsOfSeveralPeoplePayTogether,
  assertConcurrentSpendsNearTheCap,
  startAllowanceWorld,
  type AllowanceWorld,
} from "../support/allowances";

describe("allowances on PostgreSQL", { timeout: 300_000 }, () => {
  let world: AllowanceWorld;
  before(async () => {
    world = await startAllowanceWorld({ database: "postgres" });
  });
  after(() => world?.stop());

  it("lands exactly as many of 50 concurrent spends as fit under the cap, none reverting", async () => {
    await assertConcurrentSpendsNearTheCap(world);
  });

  it("lands exactly as many of 50 concurrent agent payments as fit, their leases taken with their requests", async () => {
    await assertConcurrentAgentPaymentsNearTheCap(world);
  });

  it("pays the agents of several people at once, each payment taking the relayer's turn when it is free", async () => {
    await assertAgentsOfSeveralPeoplePayTogether(world);
  });

  it("two instances resending at once send a stored revocation that did not land once, and audit it once", async () => {
    const { db } = await import("@/lib/db");
    const { resendDueRevocations } = await import("@/lib/allowances/resend");
    const { id } = await world.allow(await world.newPerson("0"), { recipients: [world.recipient()] });
    // stopped by a process that ended before sending
    await db().allowance.update({ where: { id }, data: { status: "revoking" } });
    const sent = await world.relayerNonce();
    await Promise.all([resendDueRevocations(), resendDueRevocations()]);
    const allowance = await db().allowance.findUniqueOrThrow({ where: { id } });
    assert.equal(allowance.status, "revoked");
    assert.equal(await world.relayerNonce(), sent + 1, "one transaction");
    const events = await db().auditEvent.findMany({ where: { type: "allowance.revoked", data: { contains: id } } });
    assert.deepEqual(
      events.map((event) => (JSON.parse(event.data) as { txHash: string }).txHash),
      [allowance.revocationTx],
    );
    // sent moments ago: not due again within ALLOWANCE_REVOCATION_RETRY_SECONDS (a send would find it disabled on
    // chain and record it `revoked`)
    await db().allowance.update({ where: { id }, data: { status: "revoking" } });
    await resendDueRevocations();
    assert.equal((await db().allowance.findUniqueOrThrow({ where: { id } })).status, "revoking");
  });
});
