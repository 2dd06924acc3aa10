// A person revokes an API key while its agent races twenty send_transaction calls, over real HTTP against the
// started app and a local chain, on SQLite (e2e/mcp/revocation-race.test.ts) and PostgreSQL
// (e2e/postgres/revocation-race.test.ts): afterwards nothing of that grant is pending or approvable, every
// approval fails with a clear error, and nothing reaches the chain.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startApp, type RunningApp } from "./app";
import { chainsSetting, startChain, type LocalChain } from "./chain";
import { keyHolder, type KeyHolder } from "./key-holder";
import { db } from "@/lib/db";

const RACERS = 20;
const SPACING_MS = 5;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const FRIEND = "0x000000000000000000000000000000000000bEEF";

export function revocationRaceSuite(database: "sqlite" | "postgres") {
  describe(`a revocation racing the agent's requests (${database})`, { timeout: 240_000 }, () => {
    let chain: LocalChain;
    let app: RunningApp;
    let holder: KeyHolder;

    before(async () => {
      chain = await startChain();
      app = await startApp({
        database,
        env: { CHAINS: chainsSetting(chain), RATE_LIMIT_APPROVALS_PER_PERSON: "1000/1m", RATE_LIMIT_ACCOUNT_PER_IP: "1000/1m" },
      });
      holder = await keyHolder(app, "racer@example.com");
      await chain.fund(holder.signer.address, "10");
    });
    after(async () => {
      await app?.stop();
      await chain?.stop();
    });

    it(`${RACERS} requests created while the person revokes: none stays pending or approvable, nothing is broadcast`, async () => {
      const send = () => holder.ask("send_transaction", { chain_id: 31337, to: FRIEND, value: "1000" });
      // A request the person had started approving before revoking: passkey answered, transaction signed.
      const first = await send();
      assert.ok(first.requestId, first.refusal);
      const started = await holder.prepareApproval(first.requestId);
      const revokePath = `/api/clients/${holder.clientId}/revoke`;
      const revocation = { assertion: await holder.assertion(`${revokePath}/options`) };

      // The calls leave a few milliseconds apart, and the revocation amid them: some are created before it, some
      // are refused after it, and some are on their way (past the bearer check, preparing) as it commits.
      const asks = Array.from({ length: RACERS }, (_, index) => pause(index * SPACING_MS).then(send));
      // Revoked once the first of them is created, not at a set time: on a loaded machine none may be by then.
      const deadline = Date.now() + 10_000;
      while ((await db().agentRequest.count({ where: { clientId: holder.clientId } })) < 2 && Date.now() < deadline) await pause(2);
      const revoked = await holder.person.session.json(revokePath, revocation);
      assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
      const outcomes = await Promise.all(asks);

      const rows = await db().agentRequest.findMany({ where: { clientId: holder.clientId } });
      assert.ok(rows.length >= 2, "some requests were created before the revocation");
      assert.deepEqual(
        rows.filter((row) => row.status !== "cancelled").map((row) => `${row.id}: ${row.status}`),
        [],
        "every request of the revoked grant left the queue",
      );
      for (const outcome of outcomes.filter((entry) => entry.refusal)) assert.match(outcome.refusal!, /^HTTP 401$|revoked/);

      const late = await started.post();
      assert.equal(late.status, 409, JSON.stringify(late.body));
      assert.match(String(late.body.message), /cancelled .*revoked.*can no longer be approved/);
      for (const row of rows) {
        const options = await holder.person.session.json<{ message?: string }>(`/api/approvals/${row.id}/options`);
        assert.equal(options.status, 409, JSON.stringify(options.body));
        assert.match(String(options.body.message), /cancelled .*revoked/);
      }
      assert.equal(
        await chain.client.getTransactionCount({ address: holder.signer.address, blockTag: "pending" }),
        0,
        "nothing was broadcast",
      );
      const cancellations = await db().auditEvent.findMany({ where: { type: "request.transition", clientId: holder.clientId } });
      assert.equal(
        cancellations.filter((event) => JSON.parse(event.data).to === "cancelled").length,
        rows.length,
        "each cancellation audited",
      );
    });
  });
}
