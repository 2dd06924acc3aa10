import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startApp, type RunningApp } from "../support/app";
import { expectOAuthError, INITIALIZE_PARAMS, mcp, obtainTokens, refreshTokens, register } from "../support/oauth";
import { db } from "@/lib/db";

describe("POST /oauth/revoke (RFC 7009)", () => {
  let app: RunningApp;

  function revoke(params: Record<string, string>, contentType = "application/x-www-form-urlencoded") {
    return fetch(`${app.baseUrl}/oauth/revoke`, {
      method: "POST",
      headers: { "Content-Type": contentType, Origin: "https://agent.example" },
      body: new URLSearchParams(params),
    });
  }

  async function expectRevoked200(response: Response) {
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal(await response.text(), "");
    assert.equal(response.headers.get("access-control-allow-origin"), "*");
    assert.match(response.headers.get("cache-control") ?? "", /no-store/);
  }

  const grantStatus = async (grantId: string) => (await db().grant.findUniqueOrThrow({ where: { id: grantId } })).status;
  const revokedEvents = (clientId: string) => db().auditEvent.count({ where: { type: "token.revoked", clientId } });

  before(async () => {
    app = await startApp();
  });
  after(() => app.stop());

  it("revoking a refresh token ends its grant: refresh is invalid_grant, the grant's access tokens 401, the client stays", async () => {
    const flow = await obtainTokens(app);
    const other = await obtainTokens(app, { client: flow.client });
    assert.equal((await mcp(app, flow.tokens.access_token, "initialize", INITIALIZE_PARAMS)).status, 200);
    await expectRevoked200(await revoke({ client_id: flow.client.client_id, token: flow.tokens.refresh_token! }));
    await expectOAuthError(await refreshTokens(app, flow.client, flow.tokens.refresh_token!), 400, "invalid_grant");
    assert.equal((await mcp(app, flow.tokens.access_token, "initialize", INITIALIZE_PARAMS)).status, 401);
    assert.equal(await grantStatus(flow.grantId), "revoked");
    // not a compromise: the client and its other grants keep working
    const client = await db().client.findUniqueOrThrow({ where: { id: flow.client.client_id } });
    assert.equal(client.status, "active");
    assert.equal((await mcp(app, other.tokens.access_token, "initialize", INITIALIZE_PARAMS)).status, 200);
    assert.equal((await refreshTokens(app, other.client, other.tokens.refresh_token!)).status, 200);
    assert.equal(await revokedEvents(flow.client.client_id), 1);
    // revoking again is a quiet no-op
    await expectRevoked200(await revoke({ client_id: flow.client.client_id, token: flow.tokens.refresh_token! }));
    assert.equal(await revokedEvents(flow.client.client_id), 1);
  });

  it("revoking an access token ends its grant too, whatever token_type_hint says", async () => {
    const flow = await obtainTokens(app);
    await expectRevoked200(
      await revoke({ client_id: flow.client.client_id, token: flow.tokens.access_token, token_type_hint: "refresh_token" }),
    );
    assert.equal((await mcp(app, flow.tokens.access_token, "initialize", INITIALIZE_PARAMS)).status, 401);
    await expectOAuthError(await refreshTokens(app, flow.client, flow.tokens.refresh_token!), 400, "invalid_grant");
    const event = await db().auditEvent.findFirstOrThrow({ where: { type: "token.revoked", clientId: flow.client.client_id } });
    assert.deepEqual(JSON.parse(event.data), { grant: flow.grantId, presented: "access_token" });
  });

  it("an unknown, malformed or spent token → 200 and nothing changes", async () => {
    const flow = await obtainTokens(app);
    const rotated = (await (await refreshTokens(app, flow.client, flow.tokens.refresh_token!)).json()) as { access_token: string };
    for (const token of ["x".repeat(43), "not.a.jwt", "eyJhbGciOiJIUzI1NiJ9.e30.AAAA", flow.tokens.refresh_token!]) {
      await expectRevoked200(await revoke({ client_id: flow.client.client_id, token, token_type_hint: "access_token" }));
    }
    assert.equal(await grantStatus(flow.grantId), "active");
    assert.equal((await mcp(app, rotated.access_token, "initialize", INITIALIZE_PARAMS)).status, 200);
    assert.equal((await db().client.findUniqueOrThrow({ where: { id: flow.client.client_id } })).status, "active", "not a replay");
  });

  it("a token issued to another client → 400 invalid_grant, and nothing is revoked", async () => {
    const flow = await obtainTokens(app);
    const stranger = await register(app);
    for (const token of [flow.tokens.refresh_token!, flow.tokens.access_token]) {
      await expectOAuthError(await revoke({ client_id: stranger.client_id, token }), 400, "invalid_grant");
    }
    assert.equal(await grantStatus(flow.grantId), "active");
  });

  it("authenticates the client as the token endpoint does: unknown → 401 invalid_client, missing client_id → invalid_request", async () => {
    const flow = await obtainTokens(app);
    const unknown = await revoke({ client_id: "c_unknown", token: flow.tokens.refresh_token! });
    await expectOAuthError(unknown, 401, "invalid_client");
    assert.equal(unknown.headers.get("access-control-allow-origin"), "*");
    await expectOAuthError(await revoke({ token: flow.tokens.refresh_token! }), 400, "invalid_request");
    await expectOAuthError(await revoke({ client_id: flow.client.client_id }), 400, "invalid_request");
    await expectOAuthError(
      await revoke({ client_id: flow.client.client_id, token: flow.tokens.refresh_token! }, "application/json"),
      400,
      "invalid_request",
    );
    assert.equal(await grantStatus(flow.grantId), "active");
  });
});
