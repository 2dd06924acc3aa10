import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startApp, type RunningApp } from "../support/app";
import { approvedCode, exchangeCode, INITIALIZE_PARAMS, mcp, obtainTokens, refreshTokens } from "../support/oauth";
import { db } from "@/lib/db";
import { sha256Hex } from "@/lib/crypto";
import { verifyAuditChain } from "@/lib/audit";

const PARALLEL = 20;

async function outcomes(responses: Response[]) {
  return Promise.all(
    responses.map(async (response) => ({ status: response.status, body: (await response.json()) as Record<string, string> })),
  );
}

describe("exactly once under concurrency", () => {
  let app: RunningApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.stop());

  for (let round = 1; round <= 3; round++) {
    it(`${PARALLEL} parallel exchanges of one code: one token, the rest invalid_grant, client revoked (round ${round})`, async () => {
      const { client, code, verifier, grantId } = await approvedCode(app, { scope: "mcp offline_access" });
      const results = await outcomes(await Promise.all(Array.from({ length: PARALLEL }, () => exchangeCode(app, client, code, verifier))));
      const ok = results.filter((result) => result.status === 200);
      const failed = results.filter((result) => result.status !== 200);
      assert.equal(
        ok.length,
        1,
        `exactly one success, got ${JSON.stringify(results.map((r) => r.status))}: ${JSON.stringify(failed[0]?.body)}`,
      );
      assert.ok(ok[0].body.access_token && ok[0].body.refresh_token);
      for (const result of failed) {
        assert.equal(result.status, 400, JSON.stringify(result.body));
        assert.equal(result.body.error, "invalid_grant");
      }
      const row = await db().client.findUniqueOrThrow({ where: { id: client.client_id } });
      assert.equal(row.status, "revoked");
      assert.equal((await db().grant.findUniqueOrThrow({ where: { id: grantId } })).status, "revoked");
      assert.equal((await mcp(app, ok[0].body.access_token, "initialize", INITIALIZE_PARAMS)).status, 401);
      assert.equal(await db().refreshToken.count({ where: { grantId } }), 1, "one refresh token was issued, not several");
      assert.equal(await db().auditEvent.count({ where: { type: "token.issued", clientId: client.client_id } }), 1);
      assert.equal(await db().auditEvent.count({ where: { type: "client.revoked", clientId: client.client_id } }), 1, "revoked once");
    });
  }

  for (let round = 1; round <= 3; round++) {
    it(`${PARALLEL} parallel refreshes of one refresh token: one new pair (round ${round})`, async () => {
      const { client, tokens, grantId } = await obtainTokens(app);
      const results = await outcomes(
        await Promise.all(Array.from({ length: PARALLEL }, () => refreshTokens(app, client, tokens.refresh_token!))),
      );
      const ok = results.filter((result) => result.status === 200);
      assert.equal(ok.length, 1, `exactly one success, got ${JSON.stringify(results.map((r) => r.status))}`);
      assert.ok(ok[0].body.access_token);
      assert.ok(ok[0].body.refresh_token && ok[0].body.refresh_token !== tokens.refresh_token);
      for (const result of results.filter((result) => result.status !== 200)) {
        assert.equal(result.status, 400, JSON.stringify(result.body));
        assert.equal(result.body.error, "invalid_grant");
      }
      // the old token was spent exactly once, and exactly one successor exists
      const rows = await db().refreshToken.findMany({ where: { grantId }, orderBy: { createdAt: "asc" } });
      assert.equal(rows.length, 2, "the original and one successor");
      assert.ok(rows.find((row) => row.tokenHash === sha256Hex(tokens.refresh_token!))?.rotatedAt);
      assert.ok(rows.some((row) => row.tokenHash === sha256Hex(ok[0].body.refresh_token)));
      assert.equal(await db().auditEvent.count({ where: { type: "token.refreshed", clientId: client.client_id } }), 1);
    });
  }

  it("the audit chain survived the concurrent appends", async () => {
    const verification = await verifyAuditChain();
    assert.ok(verification.ok, JSON.stringify(verification));
  });
});
