import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { startApp, type RunningApp } from "../support/app";
import { startDocumentServer, type DocumentServer } from "../support/client-metadata";
import {
  approve,
  authorize,
  createUser,
  createWatchCredential,
  exchangeCode,
  expectOAuthError,
  INITIALIZE_PARAMS,
  mcp,
  pkcePair,
  refreshTokens,
  startValidAuthorization,
  type TestClient,
} from "../support/oauth";
import { callbackListener, finishAndConnect, connectOrAuthorize, MemoryOAuthProvider } from "../support/mcp-client";
import { db } from "@/lib/db";
import { loadAuthorizationRequest } from "@/lib/oauth/consent";
import { listConnectedClients, revokeForUser } from "@/lib/oauth/connected-clients";

const REDIRECT_URI = "http://localhost:8976/callback";

describe("client metadata documents (CIMD): a URL as client_id", () => {
  let app: RunningApp;
  let documents: DocumentServer;
  let count = 0;

  /** Publishes a document at a fresh path; returns the client as the tests' helpers take it. */
  function publishClient(overrides: Record<string, unknown> = {}, headers: Record<string, string> = {}): TestClient & { path: string } {
    const path = `/clients/${++count}/metadata.json`;
    const client_id = documents.url(path);
    const body = {
      client_id,
      client_name: "Metadata Agent",
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: "none",
      ...overrides,
    };
    documents.publish(path, { body, headers: { "Cache-Control": "max-age=60", ...headers } });
    return { path, client_id, client_name: "Metadata Agent", redirect_uris: [REDIRECT_URI] };
  }

  function authorizeAs(client: TestClient, extra: Record<string, string> = {}) {
    return authorize(app, {
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: client.redirect_uris[0],
      code_challenge: pkcePair().challenge,
      code_challenge_method: "S256",
      scope: "mcp",
      state: "st",
      ...extra,
    });
  }

  /** The page shown instead of a redirect, with the reason it gives. */
  async function expectErrorPage(response: Response, reason: RegExp) {
    const html = await response.text();
    assert.equal(response.status, 400, html);
    assert.equal(response.headers.get("location"), null, "an unverified client is never redirected to");
    assert.match(html, reason);
  }

  before(async () => {
    documents = await startDocumentServer();
    app = await startApp({ env: { CLIENT_METADATA_ALLOW_PRIVATE_HOSTS: "true", NODE_EXTRA_CA_CERTS: documents.caFile } });
  });
  after(async () => {
    await app.stop();
    await documents.close();
  });

  it("the MCP SDK's client uses its metadata URL as client_id: authorize, consent, token, /mcp, refresh", async () => {
    const callback = await callbackListener();
    const provider = new MemoryOAuthProvider(callback.url, "SDK Metadata Agent");
    const path = "/sdk/client.json";
    const clientMetadataUrl = documents.url(path);
    provider.clientMetadataUrl = clientMetadataUrl;
    documents.publish(path, { body: { client_id: clientMetadataUrl, ...provider.clientMetadata } });
    try {
      assert.equal(await connectOrAuthorize(app.baseUrl, provider), null);
      assert.equal(provider.clientInformation()?.client_id, clientMetadataUrl, "the SDK did not register: the URL is its client_id");
      const response = await fetch(provider.authorizationUrl!, { redirect: "manual" });
      assert.equal(response.status, 302, await response.clone().text());
      const requestId = new URL(response.headers.get("location")!).searchParams.get("request")!;

      const consent = await loadAuthorizationRequest(requestId);
      assert.equal(consent.clientName, "SDK Metadata Agent");
      assert.equal(consent.metadataHost, new URL(clientMetadataUrl).host);

      const user = await createUser();
      const credential = await createWatchCredential(user.id);
      const { code } = await approve(requestId, user.id, [{ credentialId: credential.id, mode: "read" }]);
      const client = await finishAndConnect(app.baseUrl, provider, code);
      const listed = await client.callTool({ name: "list_credentials", arguments: {} });
      assert.match(JSON.stringify(listed), new RegExp(credential.address, "i"));
      await client.close();

      const refreshed = await refreshTokens(
        app,
        { client_id: clientMetadataUrl, client_name: "", redirect_uris: [] },
        provider.storedTokens!.refresh_token!,
      );
      assert.equal(refreshed.status, 200, await refreshed.clone().text());
      assert.equal(documents.fetches(path), 1, "the cached document served authorize, token and refresh");
    } finally {
      await callback.close();
    }
  });

  it("a document whose client_id is not its own URL is refused", async () => {
    const client = publishClient({ client_id: documents.url("/somewhere/else.json") });
    await expectErrorPage(await authorizeAs(client), /client_id does not equal its URL/);
  });

  it("a redirect_uri the document does not list is refused without redirecting to it", async () => {
    const client = publishClient();
    await expectErrorPage(
      await authorizeAs(client, { redirect_uri: "https://attacker.example/callback" }),
      /Redirect address not registered/,
    );
  });

  it("a confidential client's document is refused: client secret auth methods, a client_secret", async () => {
    await expectErrorPage(await authorizeAs(publishClient({ token_endpoint_auth_method: "client_secret_basic" })), /must be none/);
    await expectErrorPage(await authorizeAs(publishClient({ client_secret: "s3cret" })), /must not contain a client secret/);
  });

  it("a document that breaks the registration rules is refused with the rule", async () => {
    await expectErrorPage(await authorizeAs(publishClient({ redirect_uris: ["http://attacker.example/cb"] })), /redirect_uris\[0\]/);
    await expectErrorPage(await authorizeAs(publishClient({ client_name: "x".repeat(201) })), /client_name/);
    for (const [name, hex] of [
      ["Metadata\u202EAgent", "202E"],
      ["Metadata\u200BAgent", "200B"],
      ["Metadata\u0000Agent", "0000"],
    ])
      await expectErrorPage(await authorizeAs(publishClient({ client_name: name })), new RegExp(`client_name must not contain U\\+${hex}`));
  });

  it("an oversize document, a redirect and a non-JSON answer are refused", async () => {
    const big = publishClient({ padding: "x".repeat(70 * 1024) });
    await expectErrorPage(await authorizeAs(big), /larger than 65536 bytes/);
    const moved = publishClient();
    documents.publish(moved.path, { status: 302, headers: { Location: documents.url("/clients/1/metadata.json") }, body: "" });
    await expectErrorPage(await authorizeAs(moved), /redirect \(302\)/);
    const html = publishClient();
    documents.publish(html.path, { headers: { "Content-Type": "text/html" }, body: "<html></html>" });
    await expectErrorPage(await authorizeAs(html), /content type is text\/html/);
  });

  it("a client_id URL that breaks the draft's rules is refused before any fetch", async () => {
    const client = publishClient();
    for (const [variant, reason] of [
      [`${client.client_id}#fragment`, /fragment/],
      [client.client_id.replace("https://", "https://user:pw@"), /user name or password/],
      [client.client_id.replace("/metadata.json", "/../metadata.json"), /\. or \.\./],
      [client.client_id.replace(/\/clients\/.*/, ""), /must contain a path/],
    ] as const) {
      await expectErrorPage(await authorizeAs({ ...client, client_id: variant }), reason);
    }
    assert.equal(documents.fetches(client.path), 0);
  });

  it("the cache honours max-age: no fetch again while fresh, a fetch after it expired that picks up changes", async () => {
    const fresh = publishClient({}, { "Cache-Control": "max-age=60" });
    assert.equal((await authorizeAs(fresh)).status, 302);
    assert.equal((await authorizeAs(fresh)).status, 302);
    assert.equal(documents.fetches(fresh.path), 1);

    const short = publishClient({}, { "Cache-Control": "max-age=1" });
    assert.equal((await authorizeAs(short)).status, 302);
    documents.publish(short.path, {
      body: { client_id: short.client_id, client_name: "Renamed Agent", redirect_uris: [REDIRECT_URI] },
      headers: { "Cache-Control": "no-store" },
    });
    await sleep(1100);
    assert.equal((await authorizeAs(short)).status, 302);
    assert.equal(documents.fetches(short.path), 2);
    assert.equal((await db().client.findUniqueOrThrow({ where: { id: short.client_id } })).name, "Renamed Agent");
    // no-store: every use fetches it again.
    assert.equal((await authorizeAs(short)).status, 302);
    assert.equal(documents.fetches(short.path), 3);
  });

  it("the token endpoint refuses a URL whose document cannot be used with invalid_client", async () => {
    const missing = { client_id: documents.url("/nothing/here.json"), client_name: "", redirect_uris: [REDIRECT_URI] };
    const response = await exchangeCode(app, missing, "code", "verifier");
    const body = await expectOAuthError(response, 401, "invalid_client");
    assert.match(String(body.error_description), /answered 404/);
  });

  it("the Clients screen shows the document's host, and revoking there ends the client's access", async () => {
    const client = publishClient();
    const user = await createUser();
    const { requestId, pkce } = await startValidAuthorization(app, client, { scope: "mcp offline_access" });
    const { code } = await approve(requestId, user.id);
    const exchanged = await exchangeCode(app, client, code, pkce.verifier);
    assert.equal(exchanged.status, 200, await exchanged.clone().text());
    const tokens = (await exchanged.json()) as { access_token: string; refresh_token: string };
    assert.equal((await mcp(app, tokens.access_token, "initialize", INITIALIZE_PARAMS)).status, 200);

    const [row] = await listConnectedClients(user.id);
    assert.equal(row.clientId, client.client_id);
    assert.equal(row.name, "Metadata Agent");
    assert.equal(row.metadataHost, new URL(client.client_id).host);
    assert.equal(row.status, "active");

    await revokeForUser(user.id, client.client_id);
    assert.equal((await listConnectedClients(user.id))[0].status, "revoked");
    assert.equal((await mcp(app, tokens.access_token, "initialize", INITIALIZE_PARAMS)).status, 401);
    await expectOAuthError(await refreshTokens(app, client, tokens.refresh_token), 400, "invalid_grant");
  });

  /** One person's approval of `client` and its code exchange: the grant, the code (spent) and the tokens. */
  async function connect(client: TestClient, userId: string) {
    const { requestId, pkce } = await startValidAuthorization(app, client, { scope: "mcp offline_access" });
    const { code, grantId } = await approve(requestId, userId);
    const exchanged = await exchangeCode(app, client, code, pkce.verifier);
    assert.equal(exchanged.status, 200, await exchanged.clone().text());
    const tokens = (await exchanged.json()) as { access_token: string; refresh_token: string };
    return { grantId, code, verifier: pkce.verifier, tokens };
  }

  const works = async (accessToken: string) => (await mcp(app, accessToken, "initialize", INITIALIZE_PARAMS)).status === 200;
  const grantStatus = async (grantId: string) => (await db().grant.findUniqueOrThrow({ where: { id: grantId } })).status;

  it("a replay revokes only the replayer's token family: the shared URL client and other people's grants stay active", async () => {
    const client = publishClient();
    const a = await createUser();
    const b = await createUser();
    const first = await connect(client, a.id);
    const others = await connect(client, b.id);

    // A replays A's spent refresh token: A's grant is revoked, A's successor and access token stop.
    const rotated = await refreshTokens(app, client, first.tokens.refresh_token);
    assert.equal(rotated.status, 200, await rotated.clone().text());
    const successor = (await rotated.json()) as { access_token: string; refresh_token: string };
    await expectOAuthError(await refreshTokens(app, client, first.tokens.refresh_token), 400, "invalid_grant");
    assert.equal(await grantStatus(first.grantId), "revoked");
    assert.equal(await works(successor.access_token), false);
    await expectOAuthError(await refreshTokens(app, client, successor.refresh_token), 400, "invalid_grant");

    // A connects again and replays that code: that grant is revoked too.
    const second = await connect(client, a.id);
    await expectOAuthError(await exchangeCode(app, client, second.code, second.verifier), 400, "invalid_grant");
    assert.equal(await grantStatus(second.grantId), "revoked");
    assert.equal(await works(second.tokens.access_token), false);

    // The client and B's grant are untouched: B's access token works, B's refresh token rotates.
    assert.equal((await db().client.findUniqueOrThrow({ where: { id: client.client_id } })).status, "active");
    assert.equal(await grantStatus(others.grantId), "active");
    assert.equal(await works(others.tokens.access_token), true);
    const refreshed = await refreshTokens(app, client, others.tokens.refresh_token);
    assert.equal(refreshed.status, 200, await refreshed.clone().text());
    assert.equal(await works(((await refreshed.json()) as { access_token: string }).access_token), true);
    // and people can still connect it
    assert.equal(await works((await connect(client, (await createUser()).id)).tokens.access_token), true);

    // A's audit trail names both replays and both revocations; nothing says the client was revoked.
    const events = await db().auditEvent.findMany({ where: { clientId: client.client_id }, orderBy: { seq: "asc" } });
    const replays = events.filter((event) => event.type === "oauth.replay_detected");
    assert.deepEqual(
      replays.map((event) => [event.userId, JSON.parse(event.data).presented, JSON.parse(event.data).grant]),
      [
        [a.id, "refresh_token", first.grantId],
        [a.id, "authorization_code", second.grantId],
      ],
    );
    const revocations = events.filter((event) => event.type === "grant.revoked");
    assert.deepEqual(
      revocations.map((event) => [event.userId, JSON.parse(event.data).grant, JSON.parse(event.data).reason]),
      [
        [a.id, first.grantId, "replay"],
        [a.id, second.grantId, "replay"],
      ],
    );
    assert.equal(events.filter((event) => event.type === "client.revoked").length, 0);
  });

  it("revocation (RFC 7009) takes the URL as client_id", async () => {
    const client = publishClient();
    const user = await createUser();
    const { requestId, pkce } = await startValidAuthorization(app, client);
    const { code, grantId } = await approve(requestId, user.id);
    const tokens = (await (await exchangeCode(app, client, code, pkce.verifier)).json()) as { access_token: string };
    const response = await fetch(`${app.baseUrl}/oauth/revoke`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ client_id: client.client_id, token: tokens.access_token }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal((await db().grant.findUniqueOrThrow({ where: { id: grantId } })).status, "revoked");
  });
});
