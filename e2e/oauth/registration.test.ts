import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startApp, type RunningApp } from "../support/app";
import { expectOAuthError } from "../support/oauth";
import { db } from "@/lib/db";

function post(app: RunningApp, body: string, contentType = "application/json"): Promise<Response> {
  return fetch(`${app.baseUrl}/oauth/register`, { method: "POST", headers: { "Content-Type": contentType }, body });
}

function registerJson(app: RunningApp, body: unknown): Promise<Response> {
  return post(app, JSON.stringify(body));
}

describe("POST /oauth/register", () => {
  let app: RunningApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.stop());

  it("answers 201 with exactly the seed's response fields and stores the client", async () => {
    const before = Math.floor(Date.now() / 1000);
    const response = await registerJson(app, {
      client_name: "Claude Desktop",
      redirect_uris: ["https://app.example/cb", "http://localhost:8080/cb"],
      token_endpoint_auth_method: "none",
    });
    assert.equal(response.status, 201);
    assert.match(response.headers.get("content-type")!, /application\/json/);
    assert.match(response.headers.get("cache-control")!, /no-store/);
    assert.equal(response.headers.get("access-control-allow-origin"), "*");
    const body = (await response.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), [
      "client_id",
      "client_id_issued_at",
      "client_name",
      "grant_types",
      "redirect_uris",
      "response_types",
      "token_endpoint_auth_method",
    ]);
    assert.equal(typeof body.client_id, "string");
    assert.ok((body.client_id as string).length >= 16);
    assert.equal(body.client_name, "Claude Desktop");
    assert.deepEqual(body.redirect_uris, ["https://app.example/cb", "http://localhost:8080/cb"]);
    assert.equal(body.token_endpoint_auth_method, "none");
    assert.deepEqual(body.grant_types, ["authorization_code", "refresh_token"]);
    assert.deepEqual(body.response_types, ["code"]);
    assert.ok(Number.isInteger(body.client_id_issued_at));
    assert.ok(
      (body.client_id_issued_at as number) >= before - 1 && (body.client_id_issued_at as number) <= Math.floor(Date.now() / 1000) + 1,
    );

    const row = await db().client.findUnique({ where: { id: body.client_id as string } });
    assert.ok(row, "the client row exists");
    assert.equal(row.kind, "oauth");
    assert.equal(row.status, "active");
    assert.deepEqual(JSON.parse(row.redirectUris), ["https://app.example/cb", "http://localhost:8080/cb"]);
  });

  it("defaults token_endpoint_auth_method to none when absent", async () => {
    const response = await registerJson(app, { client_name: "No method", redirect_uris: ["https://app.example/cb"] });
    assert.equal(response.status, 201);
    const body = (await response.json()) as Record<string, unknown>;
    assert.equal(body.token_endpoint_auth_method, "none");
  });

  it("refuses confidential clients (client_secret_basic) with invalid_client_metadata", async () => {
    for (const method of ["client_secret_basic", "client_secret_post", "private_key_jwt"]) {
      const response = await registerJson(app, {
        client_name: "Secret",
        redirect_uris: ["https://app.example/cb"],
        token_endpoint_auth_method: method,
      });
      const body = await expectOAuthError(response, 400, "invalid_client_metadata");
      assert.match(body.error_description as string, /token_endpoint_auth_method/);
    }
  });

  const accepted = [
    "https://app.example/cb",
    "http://localhost/cb",
    "http://localhost:8080/cb",
    "https://app.example/cb?x=1",
    "http://127.0.0.1/cb",
    "http://127.0.0.1:33418/",
    "http://[::1]:8080/cb",
  ];
  for (const uri of accepted) {
    it(`accepts the redirect URI ${uri}`, async () => {
      const response = await registerJson(app, { client_name: "Ok", redirect_uris: [uri] });
      assert.equal(response.status, 201, await response.clone().text());
      assert.deepEqual(((await response.json()) as { redirect_uris: string[] }).redirect_uris, [uri]);
    });
  }

  const refused = [
    "http://localhost.evil.com/cb",
    "http://127.1/cb",
    "http://127.0.0.1.evil.com/cb",
    "http://0.0.0.0/cb",
    "https://user@evil.com/cb",
    "https://user:pass@evil.com/cb",
    "https://app.example@evil.com/cb",
    "https://a.example/cb#frag",
    "https://a.example/cb#",
    "javascript:alert(1)",
    "data:text/html,hi",
    "ftp://x/",
    "custom-scheme:/cb",
    "com.example.app://cb",
    "http://example.com/cb",
    "/cb",
    "cb",
    "//evil.com/cb",
    "",
    "https://app.example/c b",
    "https:\\\\evil.com/cb",
  ];
  for (const uri of refused) {
    it(`refuses the redirect URI ${JSON.stringify(uri)} with invalid_redirect_uri`, async () => {
      const countBefore = await db().client.count();
      const response = await registerJson(app, { client_name: "Bad", redirect_uris: ["https://fine.example/cb", uri] });
      await expectOAuthError(response, 400, "invalid_redirect_uri");
      assert.equal(await db().client.count(), countBefore, "a refused registration creates no client");
    });
  }

  it("refuses a missing or empty redirect_uris and a non-string entry", async () => {
    for (const body of [
      { client_name: "x" },
      { client_name: "x", redirect_uris: [] },
      { client_name: "x", redirect_uris: "https://app.example/cb" },
      { redirect_uris: [42] },
    ]) {
      const response = await registerJson(app, body);
      assert.equal(response.status, 400, JSON.stringify(body));
      const error = ((await response.json()) as { error: string }).error;
      assert.ok(["invalid_redirect_uri", "invalid_client_metadata"].includes(error), `${JSON.stringify(body)} → ${error}`);
    }
  });

  it("accepts 10 redirect URIs and refuses 11", async () => {
    const uris = (n: number) => Array.from({ length: n }, (_, i) => `https://app.example/cb${i}`);
    assert.equal((await registerJson(app, { client_name: "Ten", redirect_uris: uris(10) })).status, 201);
    const countBefore = await db().client.count();
    await expectOAuthError(await registerJson(app, { client_name: "Eleven", redirect_uris: uris(11) }), 400, "invalid_redirect_uri");
    assert.equal(await db().client.count(), countBefore);
  });

  it("accepts a 200-character client_name and refuses 201 characters", async () => {
    assert.equal((await registerJson(app, { client_name: "n".repeat(200), redirect_uris: ["https://app.example/cb"] })).status, 201);
    const countBefore = await db().client.count();
    const body = await expectOAuthError(
      await registerJson(app, { client_name: "n".repeat(201), redirect_uris: ["https://app.example/cb"] }),
      400,
      "invalid_client_metadata",
    );
    assert.match(body.error_description as string, /client_name/);
    assert.equal(await db().client.count(), countBefore);
  });

  for (const [label, name, code] of [
    ["a right-to-left override", "Claude\u202E tpircS", "U+202E"],
    ["a zero-width space", "Claude\u200BDesktop", "U+200B"],
    ["a control character", "Claude\u0007", "U+0007"],
    ["a line break", "Claude\nDesktop (verified)", "U+000A"],
  ] as const) {
    it(`refuses a client_name with ${label} with invalid_client_metadata, naming it`, async () => {
      const countBefore = await db().client.count();
      const body = await expectOAuthError(
        await registerJson(app, { client_name: name, redirect_uris: ["https://app.example/cb"] }),
        400,
        "invalid_client_metadata",
      );
      assert.match(body.error_description as string, new RegExp(`client_name must not contain ${code.replace("+", "\\+")}`));
      assert.equal(await db().client.count(), countBefore);
    });
  }

  it("refuses a body over 16 KiB", async () => {
    const countBefore = await db().client.count();
    const body = JSON.stringify({ client_name: "Big", redirect_uris: ["https://app.example/cb"], padding: "p".repeat(16 * 1024) });
    await expectOAuthError(await post(app, body), 400, "invalid_client_metadata");
    assert.equal(await db().client.count(), countBefore);
  });

  it("answers malformed JSON and non-object bodies with 400 invalid_client_metadata, never 500", async () => {
    const countBefore = await db().client.count();
    for (const body of [
      "{",
      "not json",
      "",
      "[]",
      JSON.stringify([{ client_name: "x", redirect_uris: ["https://app.example/cb"] }]),
      "null",
      "42",
      '"text"',
      "true",
    ]) {
      const response = await post(app, body);
      await expectOAuthError(response, 400, "invalid_client_metadata");
    }
    assert.equal(await db().client.count(), countBefore, "no client row from malformed bodies");
  });

  it("refuses grant_types and response_types that are not subsets of the seed's", async () => {
    const countBefore = await db().client.count();
    for (const extra of [
      { grant_types: ["authorization_code", "client_credentials"] },
      { grant_types: ["implicit"] },
      { grant_types: "authorization_code" },
      { response_types: ["token"] },
      { response_types: ["code", "id_token"] },
    ]) {
      const response = await registerJson(app, { client_name: "Types", redirect_uris: ["https://app.example/cb"], ...extra });
      await expectOAuthError(response, 400, "invalid_client_metadata");
    }
    assert.equal(await db().client.count(), countBefore);
  });

  it("accepts subsets of grant_types and response_types", async () => {
    const response = await registerJson(app, {
      client_name: "Subset",
      redirect_uris: ["https://app.example/cb"],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    });
    assert.equal(response.status, 201);
  });

  it("ignores unknown fields and accepts the optional RFC 7591 fields real clients send", async () => {
    const response = await registerJson(app, {
      client_name: "MCP Inspector",
      redirect_uris: ["http://localhost:6274/oauth/callback"],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      scope: "mcp offline_access",
      client_uri: "https://inspector.example",
      logo_uri: "https://inspector.example/logo.png",
      tos_uri: "https://inspector.example/tos",
      policy_uri: "https://inspector.example/policy",
      software_id: "mcp-inspector",
      software_version: "1.2.3",
      contacts: ["dev@inspector.example"],
      application_type: "native",
      some_vendor_extension: { nested: true },
    });
    assert.equal(response.status, 201, await response.clone().text());
    const body = (await response.json()) as Record<string, unknown>;
    assert.equal(body.client_name, "MCP Inspector");
    assert.equal(body.some_vendor_extension, undefined, "unknown fields are not echoed");
    assert.equal(body.application_type, "native", "application_type is echoed");
    const row = await db().client.findUniqueOrThrow({ where: { id: body.client_id as string } });
    const stored = JSON.parse(row.metadata) as Record<string, unknown>;
    assert.equal(stored.software_id, "mcp-inspector");
    assert.equal(stored.application_type, "native");
    assert.equal(stored.client_uri, "https://inspector.example");
    assert.equal(stored.some_vendor_extension, undefined);
  });

  it("accepts application_type web or native, and refuses any other with invalid_client_metadata", async () => {
    for (const applicationType of ["web", "native"]) {
      const response = await registerJson(app, {
        redirect_uris: ["http://127.0.0.1:33418/"],
        application_type: applicationType,
      });
      assert.equal(response.status, 201, await response.clone().text());
      assert.equal(((await response.json()) as Record<string, unknown>).application_type, applicationType);
    }
    for (const applicationType of ["desktop", "", 1]) {
      const response = await registerJson(app, { redirect_uris: ["https://app.example/cb"], application_type: applicationType });
      const body = await expectOAuthError(response, 400, "invalid_client_metadata");
      assert.match(body.error_description as string, /application_type/);
    }
  });

  it("treats optional fields sent as null as absent", async () => {
    const response = await registerJson(app, {
      client_name: null,
      redirect_uris: ["https://nulls.example/cb"],
      token_endpoint_auth_method: null,
      logo_uri: null,
      client_uri: null,
      scope: null,
      contacts: null,
    });
    assert.equal(response.status, 201, await response.clone().text());
    const body = (await response.json()) as Record<string, unknown>;
    assert.equal(body.token_endpoint_auth_method, "none");
    assert.equal(body.client_name, "nulls.example");
    assert.equal("logo_uri" in body, false);
    // but a null redirect_uris is still missing
    assert.equal((await registerJson(app, { client_name: "x", redirect_uris: null })).status, 400);
  });

  it("writes a client.registered audit event without secrets", async () => {
    const response = await registerJson(app, { client_name: "Audited", redirect_uris: ["https://audited.example/cb"] });
    assert.equal(response.status, 201);
    const { client_id } = (await response.json()) as { client_id: string };
    const events = await db().auditEvent.findMany({ where: { clientId: client_id } });
    assert.equal(events.length, 1);
    assert.equal(events[0].type, "client.registered");
    const data = JSON.parse(events[0].data) as Record<string, unknown>;
    assert.equal(data.name, "Audited");
  });

  it("writes no audit event for a refused registration", async () => {
    const countBefore = await db().auditEvent.count();
    await expectOAuthError(
      await registerJson(app, { client_name: "x", redirect_uris: ["http://evil.example/cb"] }),
      400,
      "invalid_redirect_uri",
    );
    assert.equal(await db().auditEvent.count(), countBefore);
  });
});
