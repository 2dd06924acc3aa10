import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { SignJWT, decodeJwt, decodeProtectedHeader } from "jose";
import { startApp, type RunningApp } from "../support/app";
import { clockShiftedBy, createWatchCredential, INITIALIZE_PARAMS, mcp, obtainTokens } from "../support/oauth";
import { db } from "@/lib/db";
import { config } from "@/lib/config";
import { signAccessToken } from "@/lib/oauth/access-token";

type Claims = { sub: string; client_id: string; scope: string; grant_id: string };

describe("POST /mcp bearer gate", () => {
  let app: RunningApp;
  let valid: Awaited<ReturnType<typeof obtainTokens>>;
  let claims: Claims;
  let resourceMetadata: string;

  /** A JWT built by hand: the test controls every field. */
  async function forge(
    options: {
      secret?: Uint8Array;
      kid?: string;
      iss?: string;
      aud?: string;
      exp?: number;
      alg?: string;
      /** the JOSE header's typ; null leaves it out */
      typ?: string | null;
      payload?: Record<string, unknown>;
    } = {},
  ) {
    const [key] = config().jwtKeys;
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ client_id: claims.client_id, scope: claims.scope, grant_id: claims.grant_id, ...options.payload })
      .setProtectedHeader({
        alg: options.alg ?? "HS256",
        ...(options.typ === null ? {} : { typ: options.typ ?? "at+jwt" }),
        kid: options.kid ?? key.kid,
      })
      .setIssuer(options.iss ?? app.baseUrl)
      .setSubject(claims.sub)
      .setAudience(options.aud ?? `${app.baseUrl}/mcp`)
      .setJti(randomBytes(16).toString("base64url"))
      .setIssuedAt(now)
      .setExpirationTime(options.exp ?? now + 3600)
      .sign(options.secret ?? new Uint8Array(Buffer.from(key.secret, "base64url")));
  }

  async function expectChallenge(response: Response, withError: boolean) {
    assert.equal(response.status, 401, await response.clone().text());
    const challenge = response.headers.get("www-authenticate");
    assert.ok(challenge, "a WWW-Authenticate header");
    assert.match(challenge, /^Bearer /);
    assert.ok(challenge.includes(`resource_metadata="${resourceMetadata}"`), challenge);
    if (withError) assert.match(challenge, /error="invalid_token"/);
    else assert.doesNotMatch(challenge, /error=/);
    assert.equal(response.headers.get("access-control-allow-origin"), "*");
    assert.match(response.headers.get("access-control-expose-headers") ?? "", /WWW-Authenticate/i);
  }

  function rawCall(authorization: string | null, method = "POST") {
    const headers: Record<string, string> = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
    if (authorization !== null) headers.Authorization = authorization;
    return fetch(`${app.baseUrl}/mcp`, {
      method,
      headers,
      body: method === "POST" ? JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: INITIALIZE_PARAMS }) : undefined,
    });
  }

  before(async () => {
    app = await startApp();
    resourceMetadata = `${app.baseUrl}/.well-known/oauth-protected-resource`;
    valid = await obtainTokens(app);
    claims = decodeJwt(valid.tokens.access_token) as unknown as Claims;
  });
  after(() => app.stop());

  it("no Authorization header → 401, resource_metadata, no error code, and the scope to ask for", async () => {
    const response = await rawCall(null);
    await expectChallenge(response, false);
    assert.match(response.headers.get("www-authenticate")!, /scope="mcp offline_access"/);
  });

  it("the resource_metadata URL serves the protected-resource metadata", async () => {
    const response = await fetch(resourceMetadata);
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { resource: string }).resource, `${app.baseUrl}/mcp`);
  });

  for (const [name, header] of [
    ["Basic credentials", "Basic dXNlcjpwYXNz"],
    ["Bearer without a token", "Bearer"],
    ["Bearer with an empty token", "Bearer "],
    ["two tokens", "Bearer a b"],
    ["a token with a forbidden character", "Bearer abc,def"],
  ] as const) {
    it(`malformed header (${name}) → 401 invalid_token`, async () => {
      await expectChallenge(await rawCall(header), true);
    });
  }

  it("a garbage token → 401 invalid_token", async () => {
    await expectChallenge(await rawCall("Bearer not-a-jwt"), true);
    await expectChallenge(await rawCall("Bearer eyJhbGciOiJIUzI1NiJ9.e30.AAAA"), true);
  });

  it("an expired token → 401 invalid_token", async () => {
    const expired = await signAccessToken(claims, clockShiftedBy(-2 * 3600));
    await expectChallenge(await mcp(app, expired, "initialize", INITIALIZE_PARAMS), true);
    // and just inside its hour it still works
    const fresh = await signAccessToken(claims, clockShiftedBy(-59 * 60));
    assert.equal((await mcp(app, fresh, "initialize", INITIALIZE_PARAMS)).status, 200);
  });

  it("a token signed with another key (same kid) → 401 invalid_token", async () => {
    await expectChallenge(await mcp(app, await forge({ secret: randomBytes(32) }), "initialize", INITIALIZE_PARAMS), true);
  });

  it("a token with an unknown kid → 401 invalid_token", async () => {
    await expectChallenge(await mcp(app, await forge({ kid: "unknown-kid" }), "initialize", INITIALIZE_PARAMS), true);
  });

  it("a token for another audience → 401 invalid_token", async () => {
    for (const aud of ["https://other.example/mcp", app.baseUrl, `${app.baseUrl}/mcp/`]) {
      await expectChallenge(await mcp(app, await forge({ aud }), "initialize", INITIALIZE_PARAMS), true);
    }
  });

  it("a token signed with the app's key but not typed at+jwt (RFC 9068 §4) → 401 invalid_token", async () => {
    for (const typ of ["JWT", "jwt", "application/jwt", "dpop+jwt", null]) {
      const response = await mcp(app, await forge({ typ }), "initialize", INITIALIZE_PARAMS);
      await expectChallenge(response, true);
      assert.match(response.headers.get("www-authenticate")!, /typ must be at\+jwt/, String(typ));
    }
    // §4 names both spellings of the one media type
    assert.equal((await mcp(app, await forge({ typ: "application/at+jwt" }), "initialize", INITIALIZE_PARAMS)).status, 200);
    assert.equal(decodeProtectedHeader(valid.tokens.access_token).typ, "at+jwt", "the tokens the app issues carry it");
  });

  it("a token from another issuer → 401 invalid_token", async () => {
    await expectChallenge(await mcp(app, await forge({ iss: "https://evil.example" }), "initialize", INITIALIZE_PARAMS), true);
  });

  it("an unsigned (alg none) or HS512 token → 401 invalid_token", async () => {
    const [head, body] = (await forge()).split(".");
    const none = `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${body}.`;
    void head;
    await expectChallenge(await rawCall(`Bearer ${none}`), true);
    const hs512 = await forge({
      alg: "HS512",
      secret: new Uint8Array(Buffer.from(config().jwtKeys[0].secret + config().jwtKeys[0].secret, "base64url")),
    });
    await expectChallenge(await mcp(app, hs512, "initialize", INITIALIZE_PARAMS), true);
  });

  it("a well-signed token whose claims do not match the grant → 401", async () => {
    await expectChallenge(await mcp(app, await forge({ payload: { grant_id: "g_nope" } }), "initialize", INITIALIZE_PARAMS), true);
    await expectChallenge(await mcp(app, await forge({ payload: { client_id: "c_other" } }), "initialize", INITIALIZE_PARAMS), true);
    await expectChallenge(await mcp(app, await forge({ payload: { grant_id: undefined } }), "initialize", INITIALIZE_PARAMS), true);
  });

  it("a valid token without the mcp scope → 403 insufficient_scope, challenge naming the scope (RFC 6750 §3.1)", async () => {
    for (const scope of ["offline_access", ""]) {
      const response = await mcp(app, await forge({ payload: { scope } }), "initialize", INITIALIZE_PARAMS);
      assert.equal(response.status, 403, await response.clone().text());
      assert.equal(
        response.headers.get("www-authenticate"),
        `Bearer error="insufficient_scope", error_description="The access token lacks the mcp scope", scope="mcp", ` +
          `resource_metadata="${resourceMetadata}"`,
      );
      assert.deepEqual(await response.json(), { error: "insufficient_scope", error_description: "The access token lacks the mcp scope" });
      assert.equal(response.headers.get("access-control-allow-origin"), "*");
      assert.match(response.headers.get("access-control-expose-headers") ?? "", /WWW-Authenticate/i);
    }
  });

  it("a valid token: initialize succeeds and tools/list lists list_credentials", async () => {
    const init = await mcp(app, valid.tokens.access_token, "initialize", INITIALIZE_PARAMS);
    assert.equal(init.status, 200, await init.clone().text());
    const initBody = (await init.json()) as { result: { serverInfo: { name: string }; capabilities: Record<string, unknown> } };
    assert.equal(initBody.result.serverInfo.name, "agent-wallet");
    assert.ok(initBody.result.capabilities.tools);
    const list = await mcp(app, valid.tokens.access_token, "tools/list");
    assert.equal(list.status, 200);
    const tools = ((await list.json()) as { result: { tools: { name: string }[] } }).result.tools.map((tool) => tool.name);
    assert.ok(tools.includes("list_credentials"), tools.join(","));
  });

  it("list_credentials returns exactly the granted credentials with their modes", async () => {
    let granted: string[] = [];
    let withheld = "";
    const flow = await obtainTokens(app, {
      credentials: async (userId) => {
        const treasury = await createWatchCredential(userId, "Treasury");
        const ops = await createWatchCredential(userId, "Ops");
        const secret = await createWatchCredential(userId, "Withheld");
        granted = [treasury.id, ops.id];
        withheld = secret.id;
        return [
          { credentialId: treasury.id, mode: "approve" },
          { credentialId: ops.id, mode: "read" },
        ];
      },
    });
    // someone else's credential exists too
    const stranger = await db().user.create({ data: { id: `u_${Date.now()}`, email: `stranger-${Date.now()}@example.test` } });
    await createWatchCredential(stranger.id, "Not yours");
    const response = await mcp(app, flow.tokens.access_token, "tools/call", { name: "list_credentials", arguments: {} });
    assert.equal(response.status, 200);
    const body = (await response.json()) as {
      result: {
        isError?: boolean;
        structuredContent: { credentials: { id: string; name: string; mode: string; kind: string; address: string }[] };
      };
    };
    assert.ok(!body.result.isError);
    const credentials = body.result.structuredContent.credentials;
    assert.deepEqual(
      credentials.map((entry) => [entry.id, entry.name, entry.mode]).sort(),
      [
        [granted[0], "Treasury", "approve"],
        [granted[1], "Ops", "read"],
      ].sort(),
    );
    assert.ok(!credentials.some((entry) => entry.id === withheld));
    for (const entry of credentials) {
      assert.equal(entry.kind, "evm_watch");
      assert.match(entry.address, /^0x[0-9a-f]{40}$/);
    }
    // and the call is audited (a read tool's event is committed just after its answer)
    const audited = () => db().auditEvent.count({ where: { type: "mcp.tool_called", clientId: flow.client.client_id } });
    for (let attempt = 0; attempt < 100 && (await audited()) === 0; attempt++) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok((await audited()) >= 1);
  });

  it("a grant with no credentials lists none", async () => {
    const response = await mcp(app, valid.tokens.access_token, "tools/call", { name: "list_credentials", arguments: {} });
    const body = (await response.json()) as { result: { structuredContent: { credentials: unknown[] } } };
    assert.deepEqual(body.result.structuredContent.credentials, []);
  });

  it("a token whose grant the person revoked → 401 invalid_token", async () => {
    const flow = await obtainTokens(app);
    assert.equal((await mcp(app, flow.tokens.access_token, "initialize", INITIALIZE_PARAMS)).status, 200);
    await db().grant.update({ where: { id: flow.grantId }, data: { status: "revoked", revokedAt: new Date() } });
    await expectChallenge(await mcp(app, flow.tokens.access_token, "initialize", INITIALIZE_PARAMS), true);
  });

  it("a token of a revoked client → 401 invalid_token, even while its grant row is active", async () => {
    const flow = await obtainTokens(app);
    assert.equal((await mcp(app, flow.tokens.access_token, "initialize", INITIALIZE_PARAMS)).status, 200);
    await db().client.update({ where: { id: flow.client.client_id }, data: { status: "revoked", revokedAt: new Date() } });
    await expectChallenge(await mcp(app, flow.tokens.access_token, "initialize", INITIALIZE_PARAMS), true);
  });

  it("GET /mcp without a token is 401 too; with a valid token it is 405 (stateless)", async () => {
    await expectChallenge(await rawCall(null, "GET"), false);
    const response = await rawCall(`Bearer ${valid.tokens.access_token}`, "GET");
    assert.equal(response.status, 405);
  });
});
