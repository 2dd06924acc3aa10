import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startApp, type RunningApp } from "../support/app";
import {
  approve,
  authorize,
  clockShiftedBy,
  createUser,
  exchangeCode,
  expectOAuthError,
  pkcePair,
  register,
  startValidAuthorization,
  type TestClient,
} from "../support/oauth";
import { db } from "@/lib/db";
import { approveAuthorizationRequest, ConsentRequestError, denyAuthorizationRequest, loadAuthorizationRequest } from "@/lib/oauth/consent";

describe("GET /oauth/authorize", () => {
  let app: RunningApp;
  let client: TestClient;
  const redirectUri = "https://agent.example/callback";
  const pkce = pkcePair();

  function valid(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
    return {
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: redirectUri,
      code_challenge: pkce.challenge,
      code_challenge_method: "S256",
      scope: "mcp",
      resource: `${app.baseUrl}/mcp`,
      state: "opaque state/with+chars=",
      ...extra,
    };
  }

  async function expectErrorPage(response: Response) {
    assert.equal(response.status, 400);
    assert.equal(response.headers.get("location"), null, "an error page never redirects");
    assert.match(response.headers.get("content-type")!, /text\/html/);
    const html = await response.text();
    assert.match(html, /<h1>/);
    assert.ok(!html.includes(pkce.challenge), "the page does not echo request parameters");
  }

  /**
   * The error a client elsewhere gets: a page with a link back that carries the error, never an automatic
   * redirect (RFC 9700 §4.11.2: anyone can register a redirect URI). Returns the link's target.
   */
  async function expectErrorRedirect(response: Response, error: string, state: string | null = "opaque state/with+chars=") {
    assert.equal(response.status, 400, await response.clone().text());
    assert.equal(response.headers.get("location"), null, "no automatic redirect to a client elsewhere");
    const html = await response.text();
    const link = /<a href="([^"]+)" rel="noreferrer">Return to ([^<]+)<\/a>/.exec(html);
    assert.ok(link, html);
    const location = new URL(link[1].replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code))));
    assert.equal(link[2], location.host);
    assert.equal(location.searchParams.get("error"), error);
    assert.ok(location.searchParams.get("error_description"), "error_description is present");
    assert.equal(location.searchParams.get("state"), state);
    assert.equal(location.searchParams.get("iss"), app.baseUrl);
    assert.equal(location.searchParams.get("code"), null);
    return location;
  }

  before(async () => {
    app = await startApp();
    client = await register(app, { redirect_uris: [redirectUri, "http://localhost:8976/callback"] });
  });
  after(() => app.stop());

  it("sends a valid request to {APP_URL}/consent?request=<id> and stores it for 10 minutes", async () => {
    const started = Date.now();
    const response = await authorize(app, valid());
    assert.equal(response.status, 302);
    const location = new URL(response.headers.get("location")!);
    assert.equal(location.origin, app.appUrl);
    assert.equal(location.pathname, "/consent");
    const id = location.searchParams.get("request")!;
    assert.ok(id && id.length >= 20, "an opaque request id");
    assert.deepEqual([...location.searchParams.keys()], ["request"], "nothing but the request id travels to the app");
    const row = await db().authorizationRequest.findUniqueOrThrow({ where: { id } });
    assert.equal(row.clientId, client.client_id);
    assert.equal(row.redirectUri, redirectUri);
    assert.equal(row.codeChallenge, pkce.challenge);
    assert.equal(row.scope, "mcp");
    assert.equal(row.state, "opaque state/with+chars=");
    assert.equal(row.resource, `${app.baseUrl}/mcp`);
    assert.equal(row.outcome, null);
    const ttl = row.expiresAt.getTime() - started;
    assert.ok(ttl > 9.9 * 60_000 && ttl < 10.1 * 60_000, `expiresAt ≈ now + 10 min, got ${ttl} ms`);
  });

  it("accepts the second registered redirect URI and a request without resource or state", async () => {
    const response = await authorize(app, valid({ redirect_uri: "http://localhost:8976/callback", resource: undefined, state: undefined }));
    assert.equal(response.status, 302);
    const id = new URL(response.headers.get("location")!).searchParams.get("request")!;
    const row = await db().authorizationRequest.findUniqueOrThrow({ where: { id } });
    assert.equal(row.state, null);
    assert.equal(row.resource, null);
  });

  it("a loopback IP redirect registered on one port is accepted on another (RFC 8252 §7.3), through to the token", async () => {
    const native = await register(app, { redirect_uris: ["http://127.0.0.1:33418/callback", "http://[::1]/callback"] });
    for (const presented of ["http://127.0.0.1:50123/callback", "http://[::1]:50124/callback"]) {
      const user = await createUser();
      const { requestId, pkce: pair } = await startValidAuthorization(app, native, { redirect_uri: presented });
      const { redirect, code } = await approve(requestId, user.id);
      assert.equal(`${redirect.origin}${redirect.pathname}`, presented, "the code goes to the port the client listens on");
      assert.equal(redirect.searchParams.get("iss"), app.baseUrl);
      // the token request names the redirect URI of the authorization request, port included
      const registeredPort = await exchangeCode(app, native, code, pair.verifier, { redirect_uri: native.redirect_uris[0] });
      await expectOAuthError(registeredPort, 400, "invalid_grant");
    }
    const user = await createUser();
    const { requestId, pkce: pair } = await startValidAuthorization(app, native, { redirect_uri: "http://127.0.0.1:50125/callback" });
    const { code } = await approve(requestId, user.id);
    const response = await exchangeCode(app, native, code, pair.verifier, { redirect_uri: "http://127.0.0.1:50125/callback" });
    assert.equal(response.status, 200, await response.clone().text());
  });

  it("a loopback IP redirect with another path, query or host than registered is refused with a page", async () => {
    const native = await register(app, { redirect_uris: ["http://127.0.0.1:33418/callback"] });
    for (const variant of [
      "http://127.0.0.1:50123/callback/",
      "http://127.0.0.1:50123/other",
      "http://127.0.0.1:50123/callback?x=1",
      "http://[::1]:50123/callback",
      "http://localhost:33418/callback",
    ]) {
      await expectErrorPage(await authorize(app, valid({ client_id: native.client_id, redirect_uri: variant })));
    }
  });

  it("defaults scope to mcp, keeps offline_access, ignores unknown parameters like prompt=consent", async () => {
    for (const [scope, stored] of [
      [undefined, "mcp"],
      ["", "mcp"],
      ["mcp  offline_access", "mcp offline_access"],
      ["mcp offline_access", "mcp offline_access"],
      ["offline_access mcp", "mcp offline_access"],
    ] as const) {
      const response = await authorize(app, valid({ scope, prompt: "consent", nonce: "n", display: "page", ui_locales: "de" }));
      assert.equal(response.status, 302, `scope ${scope}`);
      const location = new URL(response.headers.get("location")!);
      assert.equal(location.pathname, "/consent", `scope ${scope}`);
      const row = await db().authorizationRequest.findUniqueOrThrow({ where: { id: location.searchParams.get("request")! } });
      assert.equal(row.scope, stored);
    }
  });

  describe("errors that show a page and never redirect", () => {
    it("unknown client_id", async () => {
      await expectErrorPage(await authorize(app, valid({ client_id: "c_doesnotexist" })));
    });
    it("missing client_id", async () => {
      await expectErrorPage(await authorize(app, valid({ client_id: undefined })));
    });
    it("missing redirect_uri", async () => {
      await expectErrorPage(await authorize(app, valid({ redirect_uri: undefined })));
    });
    for (const variant of [
      "https://agent.example/callback/",
      "https://agent.example/callbackx",
      "https://agent.example/call",
      "https://agent.example/callback?x=1",
      "https://agent.example:8443/callback",
      "https://AGENT.example/callback",
      "http://agent.example/callback",
      "https://evil.example/callback",
      "http://localhost:8977/callback",
      "http://localhost/callback",
      "http://127.0.0.1:8976/callback",
      "http://[::1]:8976/callback",
      "not a url",
    ]) {
      it(`redirect_uri not registered: ${variant}`, async () => {
        await expectErrorPage(await authorize(app, valid({ redirect_uri: variant })));
      });
    }
    it("a client_id of the wrong kind (an API key client)", async () => {
      const user = await createUser();
      const keyClient = await db().client.create({
        data: { id: `c_key_${Date.now()}`, kind: "api_key", name: "key", userId: user.id, redirectUris: JSON.stringify([redirectUri]) },
      });
      await expectErrorPage(await authorize(app, valid({ client_id: keyClient.id })));
    });
    it("a revoked client", async () => {
      const revoked = await register(app, { redirect_uris: [redirectUri] });
      await db().client.update({ where: { id: revoked.client_id }, data: { status: "revoked", revokedAt: new Date() } });
      await expectErrorPage(await authorize(app, valid({ client_id: revoked.client_id })));
    });
    it("stores no request for a refused one", async () => {
      const countBefore = await db().authorizationRequest.count();
      await authorize(app, valid({ client_id: "c_unknown" }));
      await authorize(app, valid({ redirect_uri: "https://evil.example/cb" }));
      await authorize(app, valid({ code_challenge: undefined }));
      assert.equal(await db().authorizationRequest.count(), countBefore);
    });
  });

  describe("errors redirected to the registered redirect_uri with error, error_description, state and iss", () => {
    it("missing code_challenge → invalid_request", async () => {
      await expectErrorRedirect(await authorize(app, valid({ code_challenge: undefined })), "invalid_request");
    });
    it("code_challenge_method plain → invalid_request", async () => {
      await expectErrorRedirect(await authorize(app, valid({ code_challenge_method: "plain" })), "invalid_request");
    });
    it("missing code_challenge_method → invalid_request", async () => {
      await expectErrorRedirect(await authorize(app, valid({ code_challenge_method: undefined })), "invalid_request");
    });
    it("a malformed code_challenge → invalid_request", async () => {
      await expectErrorRedirect(await authorize(app, valid({ code_challenge: "short" })), "invalid_request");
    });
    it("missing response_type → invalid_request", async () => {
      await expectErrorRedirect(await authorize(app, valid({ response_type: undefined })), "invalid_request");
    });
    it("response_type=token → unsupported_response_type", async () => {
      await expectErrorRedirect(await authorize(app, valid({ response_type: "token" })), "unsupported_response_type");
    });
    it("scope=admin → invalid_scope", async () => {
      await expectErrorRedirect(await authorize(app, valid({ scope: "admin" })), "invalid_scope");
    });
    it("scope without mcp → invalid_scope", async () => {
      await expectErrorRedirect(await authorize(app, valid({ scope: "offline_access" })), "invalid_scope");
    });
    it("resource=https://other.example/mcp → invalid_target", async () => {
      await expectErrorRedirect(await authorize(app, valid({ resource: "https://other.example/mcp" })), "invalid_target");
    });
    it("resource naming the issuer instead of the MCP resource → invalid_target", async () => {
      await expectErrorRedirect(await authorize(app, valid({ resource: app.baseUrl })), "invalid_target");
    });
    it("an error redirect without state carries no state", async () => {
      await expectErrorRedirect(await authorize(app, valid({ scope: "admin", state: undefined })), "invalid_scope", null);
    });
    it("keeps a query already present in the registered redirect_uri", async () => {
      const withQuery = await register(app, { redirect_uris: ["https://agent.example/cb?tenant=7"] });
      const response = await authorize(
        app,
        valid({ client_id: withQuery.client_id, redirect_uri: "https://agent.example/cb?tenant=7", scope: "admin" }),
      );
      const location = await expectErrorRedirect(response, "invalid_scope");
      assert.equal(`${location.origin}${location.pathname}`, "https://agent.example/cb");
      assert.equal(location.searchParams.get("tenant"), "7");
    });
    it("a client on this machine (a loopback redirect URI) gets its error by an automatic redirect", async () => {
      const local = await register(app, { redirect_uris: ["http://127.0.0.1:7777/callback"] });
      const response = await authorize(
        app,
        valid({ client_id: local.client_id, redirect_uri: "http://127.0.0.1:7777/callback", scope: "admin" }),
      );
      assert.equal(response.status, 302);
      const location = new URL(response.headers.get("location")!);
      assert.equal(`${location.origin}${location.pathname}`, "http://127.0.0.1:7777/callback");
      assert.equal(location.searchParams.get("error"), "invalid_scope");
      assert.equal(location.searchParams.get("iss"), app.baseUrl);
    });
  });

  describe("the consent step's functions (lib/oauth/consent)", () => {
    it("approval redirects with code, state and iss", async () => {
      const user = await createUser();
      const { requestId } = await startValidAuthorization(app, client, { redirect_uri: redirectUri, state: "s-approve" });
      const { redirect, code } = await approve(requestId, user.id);
      assert.equal(`${redirect.origin}${redirect.pathname}`, redirectUri);
      assert.ok(code && code.length >= 43, "a code of at least 256 bits");
      assert.equal(redirect.searchParams.get("state"), "s-approve");
      assert.equal(redirect.searchParams.get("iss"), app.baseUrl);
      assert.equal(redirect.searchParams.get("error"), null);
      const stored = await db().authorizationCode.findMany({ where: { clientId: client.client_id } });
      assert.ok(
        stored.every((row) => row.codeHash !== code),
        "the code is stored only as a hash",
      );
      assert.equal((await loadAuthorizationRequest(requestId)).status, "approved");
    });

    it("denial redirects with error=access_denied, state and iss, and issues no code", async () => {
      const user = await createUser();
      const { requestId } = await startValidAuthorization(app, client, { redirect_uri: redirectUri, state: "s-deny" });
      const codesBefore = await db().authorizationCode.count();
      const { location } = await denyAuthorizationRequest({ requestId, userId: user.id });
      const url = new URL(location);
      assert.equal(`${url.origin}${url.pathname}`, redirectUri);
      assert.equal(url.searchParams.get("error"), "access_denied");
      assert.ok(url.searchParams.get("error_description"));
      assert.equal(url.searchParams.get("state"), "s-deny");
      assert.equal(url.searchParams.get("iss"), app.baseUrl);
      assert.equal(url.searchParams.get("code"), null);
      assert.equal(await db().authorizationCode.count(), codesBefore);
      const events = await db().auditEvent.findMany({ where: { type: "grant.denied", clientId: client.client_id } });
      assert.ok(events.length >= 1);
    });

    it("a request is decided once: approving or denying again is a typed error", async () => {
      const user = await createUser();
      const first = await startValidAuthorization(app, client);
      await approve(first.requestId, user.id);
      await assert.rejects(
        approve(first.requestId, user.id),
        (error) => error instanceof ConsentRequestError && error.code === "request_decided",
      );
      await assert.rejects(
        denyAuthorizationRequest({ requestId: first.requestId, userId: user.id }),
        (error) => error instanceof ConsentRequestError && error.code === "request_decided",
      );

      const second = await startValidAuthorization(app, client);
      await denyAuthorizationRequest({ requestId: second.requestId, userId: user.id });
      await assert.rejects(
        denyAuthorizationRequest({ requestId: second.requestId, userId: user.id }),
        (error) => error instanceof ConsentRequestError && error.code === "request_decided",
      );
      await assert.rejects(
        approve(second.requestId, user.id),
        (error) => error instanceof ConsentRequestError && error.code === "request_decided",
      );
    });

    it("an expired request (10 minutes later) cannot be approved or denied", async () => {
      const user = await createUser();
      const { requestId } = await startValidAuthorization(app, client);
      const later = clockShiftedBy(10 * 60 + 1);
      assert.equal((await loadAuthorizationRequest(requestId, later)).status, "expired");
      await assert.rejects(
        approveAuthorizationRequest({ requestId, userId: user.id, credentials: [], stayConnected: true }, later),
        (error) => error instanceof ConsentRequestError && error.code === "request_expired",
      );
      await assert.rejects(
        denyAuthorizationRequest({ requestId, userId: user.id }, later),
        (error) => error instanceof ConsentRequestError && error.code === "request_expired",
      );
      assert.equal(await db().grant.count({ where: { userId: user.id } }), 0, "no grant for an expired request");
    });

    it("an unknown request id is a typed error", async () => {
      const user = await createUser();
      await assert.rejects(approve("nope", user.id), (error) => error instanceof ConsentRequestError && error.code === "request_not_found");
    });

    it("a request of a client revoked meanwhile cannot be approved", async () => {
      const user = await createUser();
      const other = await register(app);
      const { requestId } = await startValidAuthorization(app, other);
      await db().client.update({ where: { id: other.client_id }, data: { status: "revoked", revokedAt: new Date() } });
      await assert.rejects(approve(requestId, user.id), (error) => error instanceof ConsentRequestError && error.code === "client_revoked");
      assert.equal(await db().grant.count({ where: { clientId: other.client_id } }), 0);
    });

    it("approving a malformed grant set (unknown mode, duplicate credential) is a typed error; the request stays pending", async () => {
      const user = await createUser();
      const credential = await db().credential.create({
        data: { id: `cr_mode_${Date.now()}`, userId: user.id, name: "Mine", kind: "evm_watch", address: "0x" + "3".repeat(40) },
      });
      const { requestId } = await startValidAuthorization(app, client);
      for (const credentials of [
        [{ credentialId: credential.id, mode: "admin" }],
        [
          { credentialId: credential.id, mode: "read" },
          { credentialId: credential.id, mode: "approve" },
        ],
        [{ credentialId: "", mode: "read" }],
      ]) {
        await assert.rejects(
          approve(requestId, user.id, credentials as never),
          (error) => error instanceof ConsentRequestError && error.code === "invalid_grant_set",
          JSON.stringify(credentials),
        );
      }
      assert.equal((await loadAuthorizationRequest(requestId)).status, "pending");
      assert.equal(await db().grant.count({ where: { userId: user.id } }), 0);
    });

    it("approving with someone else's credential is refused and leaves the request pending", async () => {
      const owner = await createUser();
      const stranger = await createUser();
      const credential = await db().credential.create({
        data: { id: `cr_${Date.now()}`, userId: owner.id, name: "Owner's", kind: "evm_watch", address: "0x" + "1".repeat(40) },
      });
      const { requestId } = await startValidAuthorization(app, client);
      await assert.rejects(approve(requestId, stranger.id, [{ credentialId: credential.id, mode: "read" }]));
      assert.equal((await loadAuthorizationRequest(requestId)).status, "pending");
    });
  });
});
