// A replay's audit event and the revocation it causes are one transaction, on SQLite (e2e/oauth/replay-audit.test.ts)
// and on PostgreSQL (e2e/postgres/replay-audit.test.ts): one suite per test file, as a process holds one database
// client. Atomicity is observed with a real failure between the two: a trigger, added to the app's database for one
// test, makes the revocation (or the event's insert) fail; then neither may be left behind.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startApp, type RunningApp } from "./app";
import { startDocumentServer, type DocumentServer } from "./client-metadata";
import { approvedCode, exchangeCode, expectOAuthError, register, type TestClient } from "./oauth";
import { db, usesPostgres } from "@/lib/db";
import { verifyAuditChain } from "@/lib/audit";

const REDIRECT_URI = "http://localhost:8976/callback";

/** A trigger that refuses `table`'s rows matching `when` (SQL over NEW) until `drop` is called. */
async function refuse(table: "Grant" | "AuditEvent", when: string): Promise<{ drop: () => Promise<void> }> {
  const name = `test_refuse_${table.toLowerCase()}`;
  const event = table === "Grant" ? "UPDATE" : "INSERT";
  if (usesPostgres()) {
    await db().$executeRawUnsafe(
      `CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`,
    );
    await db().$executeRawUnsafe(
      `CREATE TRIGGER ${name} BEFORE ${event} ON "${table}" FOR EACH ROW WHEN (${when}) EXECUTE FUNCTION ${name}()`,
    );
    return { drop: async () => void (await db().$executeRawUnsafe(`DROP TRIGGER ${name} ON "${table}"`)) };
  }
  await db().$executeRawUnsafe(
    `CREATE TRIGGER ${name} BEFORE ${event} ON "${table}" WHEN ${when} BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
  );
  return { drop: async () => void (await db().$executeRawUnsafe(`DROP TRIGGER ${name}`)) };
}

/** A replay while the trigger refuses: the token endpoint's 500 (server_error). */
async function replayRefused(replay: () => Promise<Response>, table: "Grant" | "AuditEvent", when: string): Promise<void> {
  const trigger = await refuse(table, when);
  let refused: Response;
  try {
    refused = await replay();
  } finally {
    await trigger.drop();
  }
  assert.equal(refused.status, 500, await refused.clone().text());
  assert.equal(((await refused.json()) as { error: string }).error, "server_error");
}

export function replayAuditSuite(database: "sqlite" | "postgres") {
  describe(`a replay's audit event and its revocation are one transaction (${database})`, () => {
    let app: RunningApp;
    let documents: DocumentServer;
    let published = 0;

    before(async () => {
      documents = await startDocumentServer();
      app = await startApp({ database, env: { CLIENT_METADATA_ALLOW_PRIVATE_HOSTS: "true", NODE_EXTRA_CA_CERTS: documents.caFile } });
    });
    after(async () => {
      await app.stop();
      await documents.close();
    });

    /** A client whose client_id is the URL of its metadata document. */
    function urlClient(): TestClient {
      const path = `/replay/${++published}.json`;
      const client_id = documents.url(path);
      documents.publish(path, { body: { client_id, client_name: "Shared Agent", redirect_uris: [REDIRECT_URI] } });
      return { client_id, client_name: "Shared Agent", redirect_uris: [REDIRECT_URI] };
    }

    /** A code exchanged once: presenting it again is a replay. */
    async function spentCode(client: TestClient) {
      const flow = await approvedCode(app, { client });
      const first = await exchangeCode(app, client, flow.code, flow.verifier);
      assert.equal(first.status, 200, await first.clone().text());
      return { ...flow, replay: () => exchangeCode(app, client, flow.code, flow.verifier) };
    }

    /** What a replay changes: the client's and the grant's status, and the client's replay and revocation events. */
    async function outcome(client: TestClient, grantId: string) {
      const events = await db().auditEvent.findMany({
        where: { clientId: client.client_id, type: { in: ["oauth.replay_detected", "client.revoked", "grant.revoked"] } },
        orderBy: { seq: "asc" },
      });
      return {
        client: (await db().client.findUniqueOrThrow({ where: { id: client.client_id } })).status,
        grant: (await db().grant.findUniqueOrThrow({ where: { id: grantId } })).status,
        events: events.map((event) => event.type),
        seqs: events.map((event) => event.seq),
      };
    }

    async function expectChainVerifies() {
      const verification = await verifyAuditChain();
      assert.ok(verification.ok, JSON.stringify(verification));
    }

    it("after a replay both events exist, next to each other in the chain, and the chain verifies", async () => {
      const registered = await register(app);
      const { grantId, replay } = await spentCode(registered);
      await expectOAuthError(await replay(), 400, "invalid_grant");
      const seen = await outcome(registered, grantId);
      assert.deepEqual([seen.client, seen.grant, seen.events], ["revoked", "revoked", ["oauth.replay_detected", "client.revoked"]]);
      assert.equal(seen.seqs[1], seen.seqs[0] + 1, "appended together");

      const shared = urlClient();
      const url = await spentCode(shared);
      await expectOAuthError(await url.replay(), 400, "invalid_grant");
      const seenUrl = await outcome(shared, url.grantId);
      assert.deepEqual([seenUrl.client, seenUrl.grant, seenUrl.events], ["active", "revoked", ["oauth.replay_detected", "grant.revoked"]]);
      assert.equal(seenUrl.seqs[1], seenUrl.seqs[0] + 1, "appended together");
      await expectChainVerifies();
    });

    for (const kind of ["registered", "URL"] as const) {
      it(`a revocation that fails leaves no replay event (${kind} client); once it can, both commit`, async () => {
        const client = kind === "registered" ? await register(app) : urlClient();
        const { grantId, replay } = await spentCode(client);
        await replayRefused(replay, "Grant", `NEW."status" = 'revoked'`);
        assert.deepEqual(await outcome(client, grantId), { client: "active", grant: "active", events: [], seqs: [] });
        await expectChainVerifies();

        await expectOAuthError(await replay(), 400, "invalid_grant");
        const seen = await outcome(client, grantId);
        assert.deepEqual(
          [seen.client, seen.grant, seen.events],
          kind === "registered"
            ? ["revoked", "revoked", ["oauth.replay_detected", "client.revoked"]]
            : ["active", "revoked", ["oauth.replay_detected", "grant.revoked"]],
        );
        await expectChainVerifies();
      });
    }

    it("a replay event that cannot be written leaves the client and its grant active", async () => {
      const client = await register(app);
      const { grantId, replay } = await spentCode(client);
      await replayRefused(replay, "AuditEvent", `NEW."type" = 'oauth.replay_detected'`);
      assert.deepEqual(await outcome(client, grantId), { client: "active", grant: "active", events: [], seqs: [] });
      await expectChainVerifies();
    });
  });
}
