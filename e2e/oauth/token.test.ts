import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { startApp, type RunningApp } from "../support/app";
import {
  approvedCode,
  clockShiftedBy,
  exchangeCode,
  expectOAuthError,
  INITIALIZE_PARAMS,
  mcp,
  obtainTokens,
  pkcePair,
  refreshTokens,
  register,
  token,
} from "../support/oauth";
import { db } from "@/lib/db";
import { sha256Hex } from "@/lib/crypto";

type Tokens = { access_token: string; token_type: string; expires_in: number; refresh_token?: string; scope: string };

async function tokensOf(response: Response): Promise<Tokens> {
  assert.equal(response.status, 200, await response.clone().text());
  assert.match(response.headers.get("cache-control")!, /no-store/);
  assert.match(response.headers.get("content-type")!, /application\/json/);
  return (await response.json()) as Tokens;
}

async function clientStatus(clientId: string): Promise<string> {
  return (await db().client.findUniqueOrThrow({ where: { id: clientId } })).status;
}

describe("POST /oauth/token", () => {
  let app: RunningApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.stop());

  describe("authorization_code", () => {
    it("exchanges a code: Bearer, 3600 s, scope, a JWT with kid and the claims of docs/product.md §5", async () => {
      const { client, code, verifier, userId, grantId } = await approvedCode(app, { scope: "mcp" });
      const started = Math.floor(Date.now() / 1000);
      const tokens = await tokensOf(await exchangeCode(app, client, code, verifier));
      assert.equal(tokens.token_type, "Bearer");
      assert.equal(tokens.expires_in, 3600);
      assert.equal(tokens.scope, "mcp");
      assert.equal(tokens.refresh_token, undefined, "no refresh token without offline_access");
      const header = decodeProtectedHeader(tokens.access_token);
      assert.equal(header.alg, "HS256");
      assert.ok(typeof header.kid === "string" && header.kid.length > 0, "a kid header");
      const claims = decodeJwt(tokens.access_token);
      assert.equal(claims.iss, app.baseUrl);
      assert.equal(claims.sub, userId);
      assert.equal(claims.aud, `${app.baseUrl}/mcp`);
      assert.equal(claims.client_id, client.client_id);
      assert.equal(claims.scope, "mcp");
      assert.equal(claims.grant_id, grantId);
      assert.ok(typeof claims.jti === "string" && claims.jti.length >= 16);
      assert.ok(Math.abs(claims.iat! - started) <= 5);
      assert.equal(claims.exp! - claims.iat!, 3600);
      // the token works on /mcp
      assert.equal((await mcp(app, tokens.access_token, "initialize", INITIALIZE_PARAMS)).status, 200);
    });

    it("issues a refresh token when offline_access was granted", async () => {
      const { client, code, verifier } = await approvedCode(app, { scope: "mcp offline_access" });
      const started = Date.now();
      const tokens = await tokensOf(await exchangeCode(app, client, code, verifier));
      assert.equal(tokens.scope, "mcp offline_access");
      assert.ok(tokens.refresh_token && tokens.refresh_token.length >= 43, "an opaque refresh token of at least 256 bits");
      assert.equal(decodeJwt(tokens.access_token).scope, "mcp offline_access");
      const row = await db().refreshToken.findUniqueOrThrow({ where: { tokenHash: sha256Hex(tokens.refresh_token) } });
      const ttl = row.expiresAt.getTime() - started;
      assert.ok(Math.abs(ttl - 30 * 24 * 3600 * 1000) < 60_000, `refresh token lives 30 days, got ${ttl} ms`);
      assert.equal(await db().refreshToken.count({ where: { tokenHash: tokens.refresh_token } }), 0, "stored only as a hash");
    });

    it("issues no refresh token when the person cleared Stay connected", async () => {
      const { client, code, verifier, grantId } = await approvedCode(app, { scope: "mcp offline_access", stayConnected: false });
      const tokens = await tokensOf(await exchangeCode(app, client, code, verifier));
      assert.equal(tokens.scope, "mcp");
      assert.equal(tokens.refresh_token, undefined);
      assert.equal(await db().refreshToken.count({ where: { grantId } }), 0);
    });

    it("issues no refresh token to a client that did not register the refresh_token grant", async () => {
      const client = await register(app, { grant_types: ["authorization_code"] });
      const { code, verifier, grantId } = await approvedCode(app, { client, scope: "mcp offline_access", stayConnected: true });
      const tokens = await tokensOf(await exchangeCode(app, client, code, verifier));
      assert.equal(tokens.scope, "mcp");
      assert.equal(tokens.refresh_token, undefined);
      assert.equal(await db().refreshToken.count({ where: { grantId } }), 0);
    });

    it("an expired code (approved 6 minutes ago) → invalid_grant", async () => {
      const { client, code, verifier } = await approvedCode(app, { clock: clockShiftedBy(-6 * 60) });
      await expectOAuthError(await exchangeCode(app, client, code, verifier), 400, "invalid_grant");
      assert.equal(await clientStatus(client.client_id), "active", "expiry is not compromise");
    });

    it("a code approved 4 minutes ago still works", async () => {
      const { client, code, verifier } = await approvedCode(app, { clock: clockShiftedBy(-4 * 60) });
      await tokensOf(await exchangeCode(app, client, code, verifier));
    });

    it("a wrong code_verifier → invalid_grant, and the code stays unusable without revoking the client", async () => {
      const { client, code, verifier } = await approvedCode(app);
      await expectOAuthError(await exchangeCode(app, client, code, pkcePair().verifier), 400, "invalid_grant");
      await expectOAuthError(await exchangeCode(app, client, code, verifier), 400, "invalid_grant");
      assert.equal(await clientStatus(client.client_id), "active");
    });

    it("a redirect_uri that differs from the authorization request → invalid_grant", async () => {
      const client = await register(app, { redirect_uris: ["http://localhost:8976/callback", "http://localhost:8976/other"] });
      const { code, verifier } = await approvedCode(app, { client });
      await expectOAuthError(
        await exchangeCode(app, client, code, verifier, { redirect_uri: "http://localhost:8976/other" }),
        400,
        "invalid_grant",
      );
      await expectOAuthError(
        await exchangeCode(app, client, code, verifier, { redirect_uri: "http://localhost:8976/callback/" }),
        400,
        "invalid_grant",
      );
    });

    it("resource = {base_url}/mcp is accepted (RFC 8707)", async () => {
      const { client, code, verifier } = await approvedCode(app);
      const tokens = await tokensOf(await exchangeCode(app, client, code, verifier, { resource: `${app.baseUrl}/mcp` }));
      assert.equal(decodeJwt(tokens.access_token).aud, `${app.baseUrl}/mcp`);
    });

    it("another resource → 400 invalid_target, and the refused request spends nothing", async () => {
      const { client, code, verifier } = await approvedCode(app, { scope: "mcp offline_access" });
      for (const resource of ["https://other.example/mcp", app.baseUrl, `${app.baseUrl}/mcp/`, ""]) {
        await expectOAuthError(await exchangeCode(app, client, code, verifier, { resource }), 400, "invalid_target");
      }
      const twice = new URLSearchParams({ grant_type: "authorization_code", client_id: client.client_id, code, code_verifier: verifier });
      twice.set("redirect_uri", client.redirect_uris[0]);
      twice.append("resource", `${app.baseUrl}/mcp`);
      twice.append("resource", "https://other.example/mcp");
      const repeated = await fetch(`${app.baseUrl}/oauth/token`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: twice,
      });
      await expectOAuthError(repeated, 400, "invalid_target");
      // the code still works once, and the client was not treated as compromised
      const tokens = await tokensOf(await exchangeCode(app, client, code, verifier));
      await expectOAuthError(
        await refreshTokens(app, client, tokens.refresh_token!, { resource: "https://other.example/mcp" }),
        400,
        "invalid_target",
      );
      await tokensOf(await refreshTokens(app, client, tokens.refresh_token!, { resource: `${app.baseUrl}/mcp` }));
      assert.equal(await clientStatus(client.client_id), "active");
    });

    it("a code issued to another client → invalid_grant", async () => {
      const { code, verifier } = await approvedCode(app);
      const thief = await register(app);
      await expectOAuthError(await exchangeCode(app, thief, code, verifier), 400, "invalid_grant");
    });

    it("an unknown code → invalid_grant", async () => {
      const client = await register(app);
      await expectOAuthError(await exchangeCode(app, client, "x".repeat(43), pkcePair().verifier), 400, "invalid_grant");
      assert.equal(await clientStatus(client.client_id), "active");
    });

    it("a reused code → invalid_grant, the client is revoked: its access token 401s and its refresh fails", async () => {
      const { client, code, verifier } = await approvedCode(app, { scope: "mcp offline_access" });
      const tokens = await tokensOf(await exchangeCode(app, client, code, verifier));
      assert.equal((await mcp(app, tokens.access_token, "initialize", INITIALIZE_PARAMS)).status, 200);
      await expectOAuthError(await exchangeCode(app, client, code, verifier), 400, "invalid_grant");
      assert.equal(await clientStatus(client.client_id), "revoked");
      assert.equal((await db().client.findUniqueOrThrow({ where: { id: client.client_id } })).revokedWhy, "replay");
      assert.equal((await mcp(app, tokens.access_token, "initialize", INITIALIZE_PARAMS)).status, 401);
      await expectOAuthError(await refreshTokens(app, client, tokens.refresh_token!), 400, "invalid_grant");
      // and it cannot start a new authorization either
      const response = await fetch(
        `${app.baseUrl}/oauth/authorize?client_id=${client.client_id}&redirect_uri=${encodeURIComponent(client.redirect_uris[0])}`,
        { redirect: "manual" },
      );
      assert.equal(response.status, 400);
    });

    it("a revoked client's other grants stop too", async () => {
      const first = await obtainTokens(app);
      const second = await obtainTokens(app, { client: first.client });
      const { code, verifier } = await approvedCode(app, { client: first.client });
      await tokensOf(await exchangeCode(app, first.client, code, verifier));
      await expectOAuthError(await exchangeCode(app, first.client, code, verifier), 400, "invalid_grant");
      assert.equal((await mcp(app, second.tokens.access_token, "initialize", INITIALIZE_PARAMS)).status, 401);
      await expectOAuthError(await refreshTokens(app, first.client, second.tokens.refresh_token!), 400, "invalid_grant");
    });
  });

  describe("request errors", () => {
    it("an unknown client_id → 401 invalid_client", async () => {
      const { code, verifier } = await approvedCode(app);
      const response = await token(app, {
        grant_type: "authorization_code",
        client_id: "c_unknown",
        code,
        redirect_uri: "http://localhost:8976/callback",
        code_verifier: verifier,
      });
      await expectOAuthError(response, 401, "invalid_client");
      // RFC 6749 §5.2 and RFC 9110 §15.5.2: a 401 names the authentication scheme it expects.
      assert.match(response.headers.get("www-authenticate") ?? "", /^Basic realm="[^"]+"/);
      await expectOAuthError(
        await token(app, { grant_type: "refresh_token", client_id: "c_unknown", refresh_token: "x" }),
        401,
        "invalid_client",
      );
    });

    it("missing parameters → invalid_request", async () => {
      const { client, code, verifier } = await approvedCode(app);
      const full = {
        grant_type: "authorization_code",
        client_id: client.client_id,
        code,
        redirect_uri: client.redirect_uris[0],
        code_verifier: verifier,
      };
      for (const missing of Object.keys(full)) {
        const response = await token(app, { ...full, [missing]: undefined });
        await expectOAuthError(response, 400, "invalid_request");
      }
      await expectOAuthError(await token(app, { grant_type: "refresh_token", client_id: client.client_id }), 400, "invalid_request");
      await expectOAuthError(await token(app, {}), 400, "invalid_request");
      // the code survived all of that
      await tokensOf(await exchangeCode(app, client, code, verifier));
    });

    it("a repeated parameter → invalid_request", async () => {
      const { client, code, verifier } = await approvedCode(app);
      const body = new URLSearchParams({
        grant_type: "authorization_code",
        client_id: client.client_id,
        code,
        redirect_uri: client.redirect_uris[0],
        code_verifier: verifier,
      });
      body.append("code", code);
      const response = await fetch(`${app.baseUrl}/oauth/token`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body,
      });
      await expectOAuthError(response, 400, "invalid_request");
    });

    it("a malformed code_verifier → invalid_grant, and it spends the code as a failed use", async () => {
      for (const malformed of ["short", "a".repeat(129), `${"a".repeat(42)}!`, `${"a".repeat(42)} `]) {
        const { client, code, verifier } = await approvedCode(app);
        await expectOAuthError(await exchangeCode(app, client, code, malformed), 400, "invalid_grant");
        await expectOAuthError(await exchangeCode(app, client, code, verifier), 400, "invalid_grant");
        assert.equal(await clientStatus(client.client_id), "active");
      }
    });

    it("a body that is not application/x-www-form-urlencoded → invalid_request", async () => {
      const { client, code, verifier } = await approvedCode(app);
      const params = {
        grant_type: "authorization_code",
        client_id: client.client_id,
        code,
        redirect_uri: client.redirect_uris[0],
        code_verifier: verifier,
      };
      for (const [type, body] of [
        ["application/json", JSON.stringify(params)],
        ["text/plain", new URLSearchParams(params).toString()],
        [null, new URLSearchParams(params).toString()],
      ] as const) {
        const headers: Record<string, string> = type ? { "Content-Type": type } : {};
        const response = await fetch(`${app.baseUrl}/oauth/token`, { method: "POST", headers, body: type ? body : new Blob([body]) });
        await expectOAuthError(response, 400, "invalid_request");
      }
    });

    it("a body over 16 KiB → invalid_request", async () => {
      const response = await token(app, { grant_type: "refresh_token", client_id: "x", refresh_token: "r".repeat(17 * 1024) });
      await expectOAuthError(response, 400, "invalid_request");
    });

    it("an unknown grant_type → unsupported_grant_type", async () => {
      const client = await register(app);
      for (const grantType of ["client_credentials", "password", "implicit", "urn:ietf:params:oauth:grant-type:jwt-bearer", "__proto__"]) {
        await expectOAuthError(await token(app, { grant_type: grantType, client_id: client.client_id }), 400, "unsupported_grant_type");
      }
    });
  });

  describe("refresh_token", () => {
    it("returns a new access token and a new refresh token; the new one works and slides 30 days", async () => {
      const { client, tokens, grantId } = await obtainTokens(app);
      const started = Date.now();
      const next = await tokensOf(await refreshTokens(app, client, tokens.refresh_token!));
      assert.equal(next.token_type, "Bearer");
      assert.equal(next.expires_in, 3600);
      assert.equal(next.scope, "mcp offline_access");
      assert.ok(next.refresh_token && next.refresh_token !== tokens.refresh_token);
      assert.notEqual(next.access_token, tokens.access_token);
      assert.notEqual(decodeJwt(next.access_token).jti, decodeJwt(tokens.access_token).jti);
      assert.equal(decodeJwt(next.access_token).grant_id, grantId);
      const row = await db().refreshToken.findUniqueOrThrow({ where: { tokenHash: sha256Hex(next.refresh_token) } });
      assert.ok(Math.abs(row.expiresAt.getTime() - started - 30 * 24 * 3600 * 1000) < 60_000, "lifetime slides to 30 days from use");
      const old = await db().refreshToken.findUniqueOrThrow({ where: { tokenHash: sha256Hex(tokens.refresh_token!) } });
      assert.ok(old.rotatedAt, "the old token is spent");
      assert.equal((await mcp(app, next.access_token, "initialize", INITIALIZE_PARAMS)).status, 200);
      // and the chain continues
      await tokensOf(await refreshTokens(app, client, next.refresh_token));
    });

    it("slides from the time of use: a token issued 29 days ago refreshes into one valid 30 days from now", async () => {
      const { client, tokens } = await obtainTokens(app);
      const hash = sha256Hex(tokens.refresh_token!);
      await db().refreshToken.update({
        where: { tokenHash: hash },
        data: { createdAt: new Date(Date.now() - 29 * 86400_000), expiresAt: new Date(Date.now() + 86400_000) },
      });
      const next = await tokensOf(await refreshTokens(app, client, tokens.refresh_token!));
      const row = await db().refreshToken.findUniqueOrThrow({ where: { tokenHash: sha256Hex(next.refresh_token!) } });
      assert.ok(row.expiresAt.getTime() > Date.now() + 29.9 * 86400_000);
    });

    it("a replayed (rotated) refresh token → invalid_grant and the client is revoked", async () => {
      const { client, tokens } = await obtainTokens(app);
      const next = await tokensOf(await refreshTokens(app, client, tokens.refresh_token!));
      await expectOAuthError(await refreshTokens(app, client, tokens.refresh_token!), 400, "invalid_grant");
      assert.equal(await clientStatus(client.client_id), "revoked");
      await expectOAuthError(await refreshTokens(app, client, next.refresh_token!), 400, "invalid_grant");
      assert.equal((await mcp(app, next.access_token, "initialize", INITIALIZE_PARAMS)).status, 401);
    });

    it("two people on one registered client: A's replay revokes the client and every grant, B's too (the seed's rule)", async () => {
      const a = await obtainTokens(app);
      const b = await obtainTokens(app, { client: a.client });
      assert.notEqual(a.user.id, b.user.id);
      await tokensOf(await refreshTokens(app, a.client, a.tokens.refresh_token!));
      await expectOAuthError(await refreshTokens(app, a.client, a.tokens.refresh_token!), 400, "invalid_grant");
      assert.equal(await clientStatus(a.client.client_id), "revoked");
      for (const grantId of [a.grantId, b.grantId]) {
        assert.equal((await db().grant.findUniqueOrThrow({ where: { id: grantId } })).status, "revoked");
      }
      assert.equal((await mcp(app, b.tokens.access_token, "initialize", INITIALIZE_PARAMS)).status, 401);
      await expectOAuthError(await refreshTokens(app, b.client, b.tokens.refresh_token!), 400, "invalid_grant");
      const events = await db().auditEvent.findMany({
        where: { clientId: a.client.client_id, type: { in: ["oauth.replay_detected", "client.revoked"] } },
      });
      assert.deepEqual(events.map((event) => event.type).sort(), ["client.revoked", "oauth.replay_detected"]);
    });

    it("a wider scope → invalid_scope; a narrower one is granted", async () => {
      const { client, tokens } = await obtainTokens(app, { scope: "mcp offline_access" });
      await expectOAuthError(
        await refreshTokens(app, client, tokens.refresh_token!, { scope: "mcp offline_access admin" }),
        400,
        "invalid_scope",
      );
      const narrow = await tokensOf(await refreshTokens(app, client, tokens.refresh_token!, { scope: "mcp" }));
      assert.equal(narrow.scope, "mcp");
      assert.equal(decodeJwt(narrow.access_token).scope, "mcp");
      assert.equal(await clientStatus(client.client_id), "active", "an invalid_scope did not spend the token");
    });

    it("a narrowed refresh does not narrow the grant: the next refresh may ask for the whole grant again", async () => {
      const { client, tokens } = await obtainTokens(app, { scope: "mcp offline_access" });
      const narrowed = await tokensOf(await refreshTokens(app, client, tokens.refresh_token!, { scope: "mcp" }));
      // the grant still holds offline_access: asking for it again is allowed
      const again = await tokensOf(await refreshTokens(app, client, narrowed.refresh_token!, { scope: "mcp offline_access" }));
      assert.equal(again.scope, "mcp offline_access");
    });

    it("an expired refresh token → invalid_grant", async () => {
      const { client, tokens } = await obtainTokens(app);
      await db().refreshToken.update({
        where: { tokenHash: sha256Hex(tokens.refresh_token!) },
        data: { expiresAt: new Date(Date.now() - 1000) },
      });
      await expectOAuthError(await refreshTokens(app, client, tokens.refresh_token!), 400, "invalid_grant");
      assert.equal(await clientStatus(client.client_id), "active", "expiry is not compromise");
    });

    it("a refresh token of another client → invalid_grant", async () => {
      const { tokens } = await obtainTokens(app);
      const other = await register(app);
      await expectOAuthError(await refreshTokens(app, other, tokens.refresh_token!), 400, "invalid_grant");
    });

    it("an unknown refresh token → invalid_grant", async () => {
      const client = await register(app);
      await expectOAuthError(await refreshTokens(app, client, "r".repeat(43)), 400, "invalid_grant");
    });

    it("after the person revokes the grant, refresh → invalid_grant", async () => {
      const { client, tokens, grantId } = await obtainTokens(app);
      await db().grant.update({ where: { id: grantId }, data: { status: "revoked", revokedAt: new Date() } });
      await expectOAuthError(await refreshTokens(app, client, tokens.refresh_token!), 400, "invalid_grant");
    });
  });
});
