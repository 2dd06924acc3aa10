import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startApp, type RunningApp } from "../support/app";
import {
  approve,
  createUser,
  createWatchCredential,
  exchangeCode,
  refreshTokens,
  register,
  startValidAuthorization,
} from "../support/oauth";
import { db } from "@/lib/db";
import { sha256Hex } from "@/lib/crypto";
import { verifyAuditChain } from "@/lib/audit";

describe("audit log of the OAuth flow", () => {
  let app: RunningApp;
  let clientId: string;
  const secrets: string[] = [];

  before(async () => {
    app = await startApp();
    // One whole flow: register, approve, exchange, refresh, replay.
    const client = await register(app, { client_name: "Audited agent" });
    clientId = client.client_id;
    const user = await createUser();
    const credential = await createWatchCredential(user.id);
    const { requestId, pkce } = await startValidAuthorization(app, client, { scope: "mcp offline_access" });
    const { code } = await approve(requestId, user.id, [{ credentialId: credential.id, mode: "approve" }]);
    secrets.push(code, pkce.verifier);
    const first = await exchangeCode(app, client, code, pkce.verifier);
    assert.equal(first.status, 200);
    const tokens = (await first.json()) as { access_token: string; refresh_token: string };
    secrets.push(tokens.access_token, tokens.refresh_token);
    const second = await refreshTokens(app, client, tokens.refresh_token);
    assert.equal(second.status, 200);
    const next = (await second.json()) as { access_token: string; refresh_token: string };
    secrets.push(next.access_token, next.refresh_token);
    const replay = await refreshTokens(app, client, tokens.refresh_token);
    assert.equal(replay.status, 400);
  });
  after(() => app.stop());

  it("records client.registered, grant.approved, token.issued, token.refreshed, oauth.replay_detected, client.revoked", async () => {
    const events = await db().auditEvent.findMany({ where: { clientId }, orderBy: { seq: "asc" } });
    assert.deepEqual(
      events.map((event) => event.type),
      ["client.registered", "grant.approved", "token.issued", "token.refreshed", "oauth.replay_detected", "client.revoked"],
    );
    const byType = Object.fromEntries(events.map((event) => [event.type, JSON.parse(event.data) as Record<string, unknown>]));
    assert.equal(byType["client.revoked"].reason, "replay");
    assert.equal(byType["oauth.replay_detected"].presented, "refresh_token");
    assert.deepEqual(byType["grant.approved"].credentials, [
      { credential: (await db().credential.findFirstOrThrow()).id, mode: "approve", policy: {} },
    ]);
    assert.equal(byType["token.issued"].scope, "mcp offline_access");
    const approved = events.find((event) => event.type === "grant.approved")!;
    assert.ok(approved.userId, "user-attributed events name the user");
  });

  it("the chain verifies", async () => {
    const verification = await verifyAuditChain();
    assert.equal(verification.ok, true, JSON.stringify(verification));
    assert.equal(verification.events, await db().auditEvent.count());
  });

  it("no row holds a code, verifier, access token or refresh token, nor their hashes", async () => {
    const rows = await db().auditEvent.findMany();
    const dump = JSON.stringify(rows);
    for (const secret of secrets) {
      assert.ok(!dump.includes(secret), "a secret leaked into the audit log");
      assert.ok(!dump.includes(sha256Hex(secret)), "a secret's hash leaked into the audit log");
      for (const part of secret.split("."))
        if (part.length > 20) assert.ok(!dump.includes(part), "part of a JWT leaked into the audit log");
    }
  });

  it("editing one row's data breaks verify at that seq; restoring it heals the chain", async () => {
    const target = await db().auditEvent.findFirstOrThrow({ where: { type: "token.issued" } });
    await db().$executeRawUnsafe(
      `UPDATE AuditEvent SET data = ? WHERE seq = ?`,
      target.data.replace("mcp offline_access", "mcp"),
      target.seq,
    );
    const broken = await verifyAuditChain();
    assert.equal(broken.ok, false);
    assert.equal(broken.ok === false && broken.brokenAt, target.seq);
    await db().$executeRawUnsafe(`UPDATE AuditEvent SET data = ? WHERE seq = ?`, target.data, target.seq);
    assert.equal((await verifyAuditChain()).ok, true);
  });

  for (const [column, value] of [
    ["type", "grant.denied"],
    ["clientId", "c_someone_else"],
    ["at", "2020-01-01T00:00:00.000Z"],
  ] as const) {
    it(`editing one row's ${column} breaks verify at that seq`, async () => {
      const target = await db().auditEvent.findFirstOrThrow({ where: { type: "grant.approved" } });
      const original = await db().$queryRawUnsafe<Record<string, unknown>[]>(
        `SELECT ${column} AS value FROM AuditEvent WHERE seq = ?`,
        target.seq,
      );
      const stored = column === "at" && typeof original[0].value === "number" ? Date.parse(value) : value;
      await db().$executeRawUnsafe(`UPDATE AuditEvent SET ${column} = ? WHERE seq = ?`, stored, target.seq);
      try {
        const broken = await verifyAuditChain();
        assert.equal(broken.ok, false);
        assert.equal(broken.ok === false && broken.brokenAt, target.seq);
      } finally {
        await db().$executeRawUnsafe(`UPDATE AuditEvent SET ${column} = ? WHERE seq = ?`, original[0].value, target.seq);
      }
      assert.equal((await verifyAuditChain()).ok, true);
    });
  }

  it("recomputing a row's own hash after editing still breaks verify at the next row", async () => {
    const { eventHash } = await import("@/lib/audit/chain");
    const target = await db().auditEvent.findFirstOrThrow({ where: { type: "token.refreshed" } });
    const forged = { ...target, data: target.data.replace(/"scope":"[^"]*"/, '"scope":"mcp"') };
    assert.notEqual(forged.data, target.data);
    await db().$executeRawUnsafe(`UPDATE AuditEvent SET data = ?, hash = ? WHERE seq = ?`, forged.data, eventHash(forged), target.seq);
    try {
      const broken = await verifyAuditChain();
      assert.equal(broken.ok, false);
      assert.equal(broken.ok === false && broken.brokenAt, target.seq + 1);
    } finally {
      await db().$executeRawUnsafe(`UPDATE AuditEvent SET data = ?, hash = ? WHERE seq = ?`, target.data, target.hash, target.seq);
    }
  });

  it("deleting a middle row breaks verify (and this test runs last: it is destructive)", async () => {
    const count = await db().auditEvent.count();
    assert.ok(count >= 3);
    const middle = Math.floor(count / 2) + 1;
    await db().$executeRawUnsafe(`DELETE FROM AuditEvent WHERE seq = ?`, middle);
    const broken = await verifyAuditChain();
    assert.equal(broken.ok, false);
    assert.equal(broken.ok === false && broken.brokenAt, middle);
  });
});
