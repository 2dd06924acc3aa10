// Unit tests of the SDK's pure parts (PKCE, URLs, challenges, callbacks) and of
// its refresh logic against a scripted fetch.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  AgentWalletClient,
  buildAuthorizationUrl,
  codeChallengeS256,
  dpopSigner,
  generateCodeVerifier,
  generateDpopJwk,
  InvalidInputError,
  NetworkError,
  OAuthError,
  parseBearerChallenge,
  parseCallback,
  ServerError,
  SignInRequiredError,
  ToolError,
  wellKnownUrl,
  type TokenSet,
} from ".";

describe("PKCE", () => {
  it("S256 matches RFC 7636 appendix B", async () => {
    assert.equal(await codeChallengeS256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
  });
  it("verifiers are 43 unreserved characters and never repeat", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const verifier = generateCodeVerifier();
      assert.match(verifier, /^[A-Za-z0-9\-._~]{43}$/);
      seen.add(verifier);
    }
    assert.equal(seen.size, 50);
  });
  it("the authorization URL carries PKCE S256, state, resource and the scopes", async () => {
    const request = await buildAuthorizationUrl({
      discovery: { authorizationEndpoint: "https://wallet.test/oauth/authorize?x=1", resource: "https://wallet.test/mcp" },
      clientId: "client-1",
      redirectUri: "http://localhost:5555/callback",
    });
    const url = new URL(request.url);
    assert.equal(url.origin + url.pathname, "https://wallet.test/oauth/authorize");
    assert.equal(url.searchParams.get("x"), "1", "the endpoint's own query is kept");
    assert.equal(url.searchParams.get("response_type"), "code");
    assert.equal(url.searchParams.get("client_id"), "client-1");
    assert.equal(url.searchParams.get("redirect_uri"), "http://localhost:5555/callback");
    assert.equal(url.searchParams.get("code_challenge_method"), "S256");
    assert.equal(url.searchParams.get("code_challenge"), await codeChallengeS256(request.codeVerifier));
    assert.equal(url.searchParams.get("state"), request.state);
    assert.equal(url.searchParams.get("resource"), "https://wallet.test/mcp");
    assert.equal(url.searchParams.get("scope"), "mcp offline_access");
  });
});

describe("URLs, challenges and callbacks", () => {
  it("well-known URLs go between host and path (RFC 8414 §3.1, RFC 9728 §3.1)", () => {
    assert.equal(wellKnownUrl("https://a.test", "oauth-authorization-server"), "https://a.test/.well-known/oauth-authorization-server");
    assert.equal(wellKnownUrl("https://a.test/mcp", "oauth-protected-resource"), "https://a.test/.well-known/oauth-protected-resource/mcp");
    assert.equal(
      wellKnownUrl("https://a.test/tenant/", "oauth-authorization-server"),
      "https://a.test/.well-known/oauth-authorization-server/tenant",
    );
  });
  it("parses a Bearer challenge", () => {
    assert.deepEqual(
      parseBearerChallenge(
        'Bearer error="invalid_token", error_description="The client was revoked", ' +
          'resource_metadata="https://a.test/.well-known/oauth-protected-resource", scope="mcp offline_access"',
      ),
      {
        error: "invalid_token",
        error_description: "The client was revoked",
        resource_metadata: "https://a.test/.well-known/oauth-protected-resource",
        scope: "mcp offline_access",
      },
    );
    assert.equal(parseBearerChallenge("Basic realm=x"), undefined);
    assert.equal(parseBearerChallenge(null), undefined);
  });
  it("parses each of a Bearer and a DPoP challenge in one header (RFC 9449 §7.1)", () => {
    const header =
      'Bearer resource_metadata="https://a.test/.well-known/oauth-protected-resource", scope="mcp offline_access", ' +
      'DPoP error="invalid_dpop_proof", error_description="The DPoP proof was already used", algs="ES256 EdDSA RS256"';
    assert.deepEqual(parseBearerChallenge(header), {
      resource_metadata: "https://a.test/.well-known/oauth-protected-resource",
      scope: "mcp offline_access",
    });
    assert.deepEqual(parseBearerChallenge(header, "DPoP"), {
      error: "invalid_dpop_proof",
      error_description: "The DPoP proof was already used",
      algs: "ES256 EdDSA RS256",
    });
  });
  it("a DPoP key given as a JWK must be a private one", async () => {
    const { d: _private, ...publicJwk } = await generateDpopJwk();
    await assert.rejects(dpopSigner(publicJwk), /must be its private key/);
  });
  it("a callback must carry our state and our issuer; an error becomes an OAuthError with its code", () => {
    const query = (entries: Record<string, string>) => new URLSearchParams(entries);
    assert.equal(parseCallback(query({ code: "c", state: "s", iss: "https://a.test" }), { state: "s", issuer: "https://a.test" }), "c");
    assert.throws(() => parseCallback(query({ code: "c", state: "other" }), { state: "s" }), /state does not match/);
    assert.throws(
      () => parseCallback(query({ code: "c", state: "s", iss: "https://evil.test" }), { state: "s", issuer: "https://a.test" }),
      /issuer/,
    );
    assert.throws(
      () => parseCallback(query({ error: "access_denied", state: "s" }), { state: "s" }),
      (error: unknown) => error instanceof OAuthError && error.code === "access_denied",
    );
  });
});

/** A scripted service: /mcp accepts only `valid`, the token endpoint rotates. */
const OLD_BALANCE = {
  credential_id: "c1",
  address: "0x" + "1".repeat(40),
  chain_id: 31337,
  chain_name: "Local",
  symbol: "ETH",
  wei: "1500000000000000000",
  formatted: "1.5",
};

function fakeService() {
  const events: string[] = [];
  let current = { access: "access-1", refresh: "refresh-1" };
  const spent = new Set<string>();
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
      new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });
    if (url.pathname === "/.well-known/oauth-protected-resource")
      return json({ resource: "https://w.test/mcp", authorization_servers: ["https://w.test"] });
    if (url.pathname === "/.well-known/oauth-authorization-server") {
      return json({
        issuer: "https://w.test",
        authorization_endpoint: "https://w.test/oauth/authorize",
        token_endpoint: "https://w.test/oauth/token",
        code_challenge_methods_supported: ["S256"],
      });
    }
    if (url.pathname === "/oauth/token") {
      const form = new URLSearchParams(String(init?.body));
      const presented = form.get("refresh_token")!;
      events.push(`refresh ${presented}`);
      if (spent.has(presented) || presented !== current.refresh)
        return json({ error: "invalid_grant", error_description: "The refresh token was already used" }, 400);
      spent.add(presented);
      const n = Number(presented.split("-")[1]) + 1;
      current = { access: `access-${n}`, refresh: `refresh-${n}` };
      return json({
        access_token: current.access,
        token_type: "Bearer",
        expires_in: 3600,
        refresh_token: current.refresh,
        scope: "mcp offline_access",
      });
    }
    if (url.pathname === "/mcp") {
      const bearer = new Headers(init?.headers).get("authorization")?.replace(/^Bearer /, "");
      const body = JSON.parse(String(init?.body));
      events.push(`mcp ${body.method} ${bearer}`);
      if (bearer !== current.access && !bearer?.startsWith("svc_live_")) {
        return json({ error: "invalid_token" }, 401, {
          "WWW-Authenticate": 'Bearer error="invalid_token", error_description="The access token expired"',
        });
      }
      if (body.id === undefined) return new Response(null, { status: 202 });
      if (body.method === "initialize")
        return json({
          jsonrpc: "2.0",
          id: body.id,
          result: { protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "x", version: "1" } },
        });
      if (body.params.name === "sign_message")
        return json({
          jsonrpc: "2.0",
          id: body.id,
          result: { isError: true, content: [{ type: "text", text: "Credential Main is read-only" }] },
        });
      if (body.params.name === "get_balance") {
        // A balance as servers before values in money answer it: no `fiat` field.
        const token = { token: "0x" + "2".repeat(40), symbol: "TST", decimals: 18, balance: "5", formatted: "0.000000000000000005" };
        const balance = { ...OLD_BALANCE, tokens: [token] };
        return json({ jsonrpc: "2.0", id: body.id, result: { content: [{ type: "text", text: "{}" }], structuredContent: balance } });
      }
      const credentials = [{ id: "c1", name: "Main", kind: "evm", address: "0x" + "1".repeat(40), mode: "read" }];
      return json({ jsonrpc: "2.0", id: body.id, result: { content: [{ type: "text", text: "{}" }], structuredContent: { credentials } } });
    }
    return json({}, 404);
  }) as typeof globalThis.fetch;
  return { fetch, events, spent: () => spent };
}

describe("the client's refresh", () => {
  it("a refused token refreshes once, persists the rotated tokens before using them, and concurrent calls share one refresh", async () => {
    const service = fakeService();
    const saved: TokenSet[] = [];
    const client = new AgentWalletClient({
      baseUrl: "https://w.test",
      accessToken: "garbage",
      refreshToken: "refresh-1",
      clientId: "c",
      fetch: service.fetch,
      onTokens: async (tokens) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        service.events.push(`saved ${tokens.refreshToken}`);
        saved.push(tokens);
      },
    });
    const [a, b] = await Promise.all([client.listCredentials(), client.listCredentials()]);
    assert.equal(a.credentials[0].name, "Main");
    assert.equal(b.credentials.length, 1);
    assert.deepEqual(
      saved.map((tokens) => tokens.refreshToken),
      ["refresh-2"],
      "one refresh for both calls",
    );
    const savedAt = service.events.indexOf("saved refresh-2");
    const firstUse = service.events.findIndex((event) => event.endsWith(" access-2"));
    assert.ok(savedAt >= 0 && savedAt < firstUse, `persisted before use: ${service.events.join(" | ")}`);
    assert.equal(client.tokens?.refreshToken, "refresh-2");
  });

  it("a failed or impossible refresh is SignInRequiredError; tool errors carry the tool's message; inputs are checked first", async () => {
    const service = fakeService();
    const client = new AgentWalletClient({
      baseUrl: "https://w.test",
      accessToken: "garbage",
      refreshToken: "refresh-0",
      clientId: "c",
      fetch: service.fetch,
    });
    await assert.rejects(
      client.listCredentials(),
      (error: unknown) => error instanceof SignInRequiredError && /sign in again/.test(error.message) && error.cause instanceof OAuthError,
    );
    const noRefresh = new AgentWalletClient({ baseUrl: "https://w.test", accessToken: "garbage", fetch: service.fetch });
    await assert.rejects(
      noRefresh.listCredentials(),
      (error: unknown) => error instanceof SignInRequiredError && /The access token expired/.test(error.message),
    );

    const keyed = new AgentWalletClient({ baseUrl: "https://w.test", apiKey: "svc_live_x", fetch: service.fetch });
    await assert.rejects(
      keyed.signMessage({ credential_id: "c1", message: "hi" }),
      (error: unknown) => error instanceof ToolError && error.message === "Credential Main is read-only" && error.tool === "sign_message",
    );
    await assert.rejects(keyed.signMessage({ credential_id: "c1", message: "" }), InvalidInputError);
    await assert.rejects(keyed.getBalance({ credential_id: "c1", chain_id: -1 }), InvalidInputError);
  });

  it("a balance from a server before values in money is accepted, without them", async () => {
    const keyed = new AgentWalletClient({ baseUrl: "https://w.test", apiKey: "svc_live_x", fetch: fakeService().fetch });
    const balance = await keyed.getBalance({ credential_id: "c1" });
    assert.equal(balance.wei, OLD_BALANCE.wei);
    assert.equal(balance.fiat, undefined);
    assert.equal(balance.tokens[0].fiat, undefined);
  });
});

describe("idempotency keys (issue 55)", () => {
  const view = {
    request_id: "rq_1",
    kind: "send_transaction",
    status: "completed",
    credential_id: "c1",
    chain_id: 31337,
    approval_url: "https://w.test/approvals/rq_1",
    created_at: "2026-01-01T00:00:00.000Z",
    expires_at: "2026-01-01T00:10:00.000Z",
    signature: null,
    tx_hash: "0x" + "a".repeat(64),
    reason: null,
  };
  /** /mcp answering each tools/call with the next of `answers` (a lost answer, or a tool's result), recording its arguments. */
  function scripted(answers: ("lost" | 503 | "refused" | "ok")[]) {
    const calls: Record<string, unknown>[] = [];
    const fetch = (async (_input: string | URL | Request, init?: RequestInit) => {
      const body = JSON.parse(String(init?.body));
      const json = (value: unknown, status = 200) =>
        new Response(JSON.stringify(value), { status, headers: { "Content-Type": "application/json" } });
      if (body.id === undefined) return new Response(null, { status: 202 });
      if (body.method === "initialize")
        return json({ jsonrpc: "2.0", id: body.id, result: { protocolVersion: "2025-06-18", capabilities: {} } });
      calls.push(body.params.arguments);
      const answer = answers.shift() ?? "ok";
      if (answer === "lost") throw new TypeError("fetch failed");
      if (answer === 503) return new Response("busy", { status: 503 });
      if (answer === "refused")
        return json({ jsonrpc: "2.0", id: body.id, result: { isError: true, content: [{ type: "text", text: "no" }] } });
      return json({ jsonrpc: "2.0", id: body.id, result: { content: [{ type: "text", text: "{}" }], structuredContent: view } });
    }) as typeof globalThis.fetch;
    const client = new AgentWalletClient({ baseUrl: "https://w.test", mcpUrl: "https://w.test/mcp", apiKey: "svc_live_x", fetch });
    return { client, calls };
  }
  const transfer = { credential_id: "c1", chain_id: 31337, to: "0x" + "3".repeat(40), value: "1" };

  it("a payment gets a key of its own and is sent again with it when its answer is lost, up to three times", async () => {
    const { client, calls } = scripted([503, "lost", "ok"]);
    assert.equal((await client.sendTransaction(transfer)).request_id, "rq_1");
    assert.equal(calls.length, 3);
    const keys = new Set(calls.map((call) => call.idempotency_key));
    assert.equal(keys.size, 1, "one key for the three sends");
    assert.match(String([...keys][0]), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

    const lost = scripted(["lost", "lost", "lost"]);
    await assert.rejects(lost.client.sendTransaction(transfer), NetworkError);
    assert.equal(lost.calls.length, 3);
  });

  it("the caller's own key is sent as given; a refusal is not sent again, nor is a call that takes no key", async () => {
    const own = scripted(["ok"]);
    await own.client.sendTransaction({ ...transfer, idempotency_key: "order-42" });
    assert.deepEqual(own.calls[0], { ...transfer, idempotency_key: "order-42" });
    await assert.rejects(own.client.sendTransaction({ ...transfer, idempotency_key: "" }), InvalidInputError);
    await assert.rejects(own.client.sendTransaction({ ...transfer, idempotency_key: "new\nline" }), InvalidInputError);

    const refused = scripted(["refused"]);
    await assert.rejects(refused.client.payX402({ credential_id: "c1", payment_required: "x" }), ToolError);
    assert.equal(refused.calls.length, 1);
    assert.equal(typeof refused.calls[0].idempotency_key, "string");

    const read = scripted([503]);
    await assert.rejects(read.client.getRequest({ request_id: "rq_1" }), ServerError);
    assert.equal(read.calls.length, 1);
    assert.equal(read.calls[0].idempotency_key, undefined);
  });
});
