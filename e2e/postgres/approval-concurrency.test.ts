// An approval happens exactly once under concurrency, on PostgreSQL over real HTTP: 50 parallel approvals of
// one request — replaying one passkey assertion, or each with an assertion of its own — complete it once,
// record one transition to approved, and every other attempt is refused without a change.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startApp, type RunningApp } from "../support/app";
import { keyHolder, type KeyHolder } from "../support/key-holder";
import { db } from "@/lib/db";
import { verifyAuditChain } from "@/lib/audit";

const PARALLEL = 50;

describe("an approval happens exactly once (PostgreSQL)", { timeout: 180_000 }, () => {
  let app: RunningApp;
  let holder: KeyHolder;

  async function newRequest(message: string): Promise<string> {
    const { requestId, refusal } = await holder.ask("sign_message", { message });
    assert.ok(requestId, refusal);
    return requestId;
  }

  async function expectExactlyOnce(requestId: string, attempts: Promise<{ status: number; body: Record<string, unknown> }>[]) {
    const results = await Promise.all(attempts);
    const statuses = results.map((result) => result.status);
    assert.equal(statuses.filter((status) => status === 200).length, 1, `exactly one approval, got ${JSON.stringify(statuses)}`);
    for (const result of results.filter((entry) => entry.status !== 200)) {
      assert.ok(result.status >= 400 && result.status < 500, JSON.stringify(result));
      assert.equal(typeof result.body.error, "string");
    }
    const row = await db().agentRequest.findUniqueOrThrow({ where: { id: requestId } });
    assert.equal(row.status, "completed");
    const approvals = await db().auditEvent.findMany({ where: { requestId, type: "request.transition" } });
    assert.equal(approvals.filter((event) => JSON.parse(event.data).to === "approved").length, 1, "one transition to approved");
    assert.equal(approvals.filter((event) => JSON.parse(event.data).to === "completed").length, 1, "one completion");
  }

  before(async () => {
    // Limits far above the test's 100 attempts: this suite is about exactly-once, rate limits have their own.
    app = await startApp({
      database: "postgres",
      env: { RATE_LIMIT_APPROVALS_PER_PERSON: "1000/1m", RATE_LIMIT_ACCOUNT_PER_IP: "1000/1m" },
    });
    holder = await keyHolder(app, "concurrent@example.com");
  });
  after(() => app?.stop());

  it(`${PARALLEL} parallel approvals replaying one assertion: one completes the request, the rest are refused`, async () => {
    const message = "Replay me";
    const requestId = await newRequest(message);
    const path = `/api/approvals/${requestId}`;
    const body = { assertion: await holder.assertion(`${path}/options`), signature: await holder.signer.signMessage({ message }) };
    await expectExactlyOnce(
      requestId,
      Array.from({ length: PARALLEL }, () => holder.person.session.json(`${path}/approve`, body)),
    );
  });

  it(`${PARALLEL} parallel approvals, each with its own valid assertion: still exactly one`, async () => {
    const message = "Race me";
    const requestId = await newRequest(message);
    const path = `/api/approvals/${requestId}`;
    const signature = await holder.signer.signMessage({ message });
    const assertions = [];
    for (let i = 0; i < PARALLEL; i++) assertions.push(await holder.assertion(`${path}/options`));
    await expectExactlyOnce(
      requestId,
      assertions.map((answer) => holder.person.session.json(`${path}/approve`, { assertion: answer, signature })),
    );
    const verification = await verifyAuditChain();
    assert.ok(verification.ok, JSON.stringify(verification));
  });
});
