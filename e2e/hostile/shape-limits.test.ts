// Oversized or malformed input over real HTTP: a 4xx in the protocol's own format, never a 500, never a write;
// and a tool call waiting for the person stops waiting when its client hangs up.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startApp, type RunningApp } from "../support/app";
import { INITIALIZE_PARAMS, register, signerGrant } from "../support/oauth";
import { db } from "@/lib/db";
import { rejectRequest } from "@/lib/wallet/approvals";

const deep = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
const LONG_AUTHORIZATION = `Bearer ${"a".repeat(5000)}`;

describe("shape limits", { timeout: 120_000 }, () => {
  let app: RunningApp;
  let bearer = "";
  let credentialId = "";
  before(async () => {
    app = await startApp();
    ({ bearer, credentialId } = await signerGrant(app));
  });
  after(() => app?.stop());

  /** Rows any accepted input would add: audit events, clients, consent and agent requests. */
  const writes = async () =>
    (await db().auditEvent.count()) +
    (await db().client.count()) +
    (await db().authorizationRequest.count()) +
    (await db().agentRequest.count());

  async function unchanged(run: () => Promise<void>) {
    const before = await writes();
    await run();
    await new Promise((resolve) => setTimeout(resolve, 300)); // a read tool's audit event commits just after its answer
    assert.equal(await writes(), before, "nothing was written");
  }

  /** A body in 64 KiB chunks with no declared length (Transfer-Encoding: chunked), as a streaming client sends it. */
  const inChunks = (text: string) => {
    const bytes = new TextEncoder().encode(text);
    const body = new ReadableStream({
      start(controller) {
        for (let offset = 0; offset < bytes.length; offset += 64 * 1024) controller.enqueue(bytes.subarray(offset, offset + 64 * 1024));
        controller.close();
      },
    });
    return { body, duplex: "half" as const };
  };
  type Body = string | ReturnType<typeof inChunks>;

  const post = (path: string, body: Body, headers: Record<string, string> = {}) =>
    fetch(`${app.baseUrl}${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers },
      ...(typeof body === "string" ? { body } : body),
    } as RequestInit);
  const mcpPost = (body: Body, headers: Record<string, string> = {}) =>
    post("/mcp", body, { Authorization: `Bearer ${bearer}`, "MCP-Protocol-Version": "2025-03-26", ...headers });
  const listCredentials = (id: number) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "list_credentials", arguments: {} },
  });

  async function jsonRpcError(response: Response, status: number, code: number, message: RegExp) {
    assert.equal(response.status, status);
    const body = (await response.json()) as { jsonrpc: string; error: { code: number; message: string } };
    assert.equal(body.jsonrpc, "2.0");
    assert.equal(body.error.code, code);
    assert.match(body.error.message, message);
  }

  it("/mcp: a batch over 20 messages is a JSON-RPC error, HTTP 400, and runs none of them", async () => {
    await unchanged(async () => {
      const batch = Array.from({ length: 21 }, (_, index) => listCredentials(index + 1));
      await jsonRpcError(await mcpPost(JSON.stringify(batch)), 400, -32600, /at most 20/);
    });
  });

  it("/mcp: JSON nested deeper than 32 levels is a parse error, HTTP 400", async () => {
    await unchanged(async () => {
      const call = { ...listCredentials(1), params: { name: "list_credentials", arguments: {}, extra: "DEEP" } };
      const body = JSON.stringify(call).replace('"DEEP"', deep(40));
      await jsonRpcError(await mcpPost(body), 400, -32700, /at most 32 levels/);
    });
  });

  /** A read call answers with the granted credential; its audit event commits just after the answer. */
  async function servesACall(body: Body) {
    const response = await mcpPost(body);
    assert.equal(response.status, 200);
    const answer = (await response.json()) as { result: { structuredContent: { credentials: { id: string }[] } } };
    assert.deepEqual(
      answer.result.structuredContent.credentials.map((credential) => credential.id),
      [credentialId],
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
  }

  it("/mcp: a call sent in chunks, without a declared length, is served like any other", async () => {
    await servesACall(inChunks(JSON.stringify(listCredentials(7))));
  });

  /** A tools/call padded past 1 MiB, valid JSON all the same. */
  const oversized = () =>
    JSON.stringify({ ...listCredentials(1), params: { name: "list_credentials", arguments: {}, _meta: { pad: "x".repeat(1024 * 1024) } } });

  it("/mcp: a body over 1 MiB is a JSON-RPC error, HTTP 413, and the connection serves the next call", async () => {
    await unchanged(async () => {
      await jsonRpcError(await mcpPost(oversized()), 413, -32600, /at most 1048576 bytes/);
    });
    await servesACall(JSON.stringify(listCredentials(2)));
  });

  it("/mcp: so is one over 1 MiB that comes in chunks, without a declared length", async () => {
    await unchanged(async () => {
      await jsonRpcError(await mcpPost(inChunks(oversized())), 413, -32600, /at most 1048576 bytes/);
    });
    await servesACall(JSON.stringify(listCredentials(3)));
  });

  it("/mcp: an over-long Authorization header is a 401 invalid_token challenge", async () => {
    await unchanged(async () => {
      const response = await mcpPost(JSON.stringify(listCredentials(1)), { Authorization: LONG_AUTHORIZATION });
      assert.equal(response.status, 401);
      assert.match(response.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
      assert.equal(((await response.json()) as { error: string }).error, "invalid_token");
    });
  });

  it("registration: deep JSON and an over-long Authorization header are RFC 7591 / RFC 6749 errors", async () => {
    await unchanged(async () => {
      const deepBody = JSON.stringify({ redirect_uris: ["http://localhost:1/cb"], client_uri: "X" }).replace('"X"', deep(40));
      const response = await post("/oauth/register", deepBody);
      assert.equal(response.status, 400);
      assert.equal(((await response.json()) as { error: string }).error, "invalid_client_metadata");
      const valid = JSON.stringify({ redirect_uris: ["http://localhost:1/cb"] });
      const long = await post("/oauth/register", valid, { Authorization: LONG_AUTHORIZATION });
      assert.equal(long.status, 400);
      assert.equal(((await long.json()) as { error: string }).error, "invalid_request");
    });
  });

  it("token and revocation: an over-long Authorization header is invalid_request", async () => {
    const client = await register(app);
    await unchanged(async () => {
      for (const path of ["/oauth/token", "/oauth/revoke"]) {
        const response = await fetch(`${app.baseUrl}${path}`, {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded", Authorization: LONG_AUTHORIZATION },
          body: new URLSearchParams({ grant_type: "refresh_token", client_id: client.client_id, refresh_token: "x", token: "x" }),
        });
        assert.equal(response.status, 400, path);
        assert.equal(((await response.json()) as { error: string }).error, "invalid_request", path);
      }
    });
  });

  it("authorize: a query over 8 KiB is a 414 page, and no consent request is stored", async () => {
    const client = await register(app);
    await unchanged(async () => {
      const query = new URLSearchParams({ client_id: client.client_id, response_type: "code", state: "s".repeat(9000) });
      const response = await fetch(`${app.baseUrl}/oauth/authorize?${query}`, { redirect: "manual" });
      assert.equal(response.status, 414);
      assert.match(response.headers.get("content-type") ?? "", /text\/html/);
    });
  });

  it("/api routes: deep JSON is invalid_json in the {error, message} shape", async () => {
    await unchanged(async () => {
      const response = await fetch(`${app.appUrl}/api/webauthn/sign-up`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Origin: app.appUrl },
        body: JSON.stringify({ email: "X" }).replace('"X"', deep(40)),
      });
      assert.equal(response.status, 400);
      const body = (await response.json()) as { error: string; message: string };
      assert.deepEqual(Object.keys(body), ["error", "message"]);
      assert.equal(body.error, "invalid_json");
    });
  });

  /** When the tool call of `requestId` that waited was recorded (its audit event is written once the wait ends). */
  async function waitEndedAt(requestId: string, since: number): Promise<number | null> {
    const events = await db().auditEvent.findMany({ where: { type: "mcp.tool_called", requestId, at: { gte: new Date(since) } } });
    const waited = events.find((event) => (JSON.parse(event.data) as { tool?: string }).tool === "get_request");
    return waited ? waited.at.getTime() : null;
  }

  /** A sign_message request, pending: its id. */
  async function pendingRequest(message: string): Promise<string> {
    const call = { name: "sign_message", arguments: { credential_id: credentialId, message } };
    const created = (await (await mcpPost(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: call }))).json()) as {
      result: { structuredContent: { request_id: string; status: string } };
    };
    assert.equal(created.result.structuredContent.status, "pending");
    return created.result.structuredContent.request_id;
  }

  for (const era of ["2025-06-18", "2026-07-28"] as const) {
    it(`a tool call waiting for the person stops when its HTTP request is aborted (${era})`, async () => {
      const requestId = await pendingRequest("hello");

      const modern =
        era === "2026-07-28"
          ? {
              headers: { "MCP-Protocol-Version": era, "Mcp-Method": "tools/call", "Mcp-Name": "get_request" },
              meta: {
                _meta: {
                  "io.modelcontextprotocol/protocolVersion": era,
                  "io.modelcontextprotocol/clientCapabilities": {},
                  "io.modelcontextprotocol/clientInfo": { name: "test", version: "1.0.0" },
                },
              },
            }
          : { headers: { "MCP-Protocol-Version": era } as Record<string, string>, meta: {} };
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "get_request", arguments: { request_id: requestId, wait_seconds: 30 }, ...modern.meta },
      });
      const started = Date.now();
      const hangUp = new AbortController();
      const call = fetch(`${app.baseUrl}/mcp`, {
        method: "POST",
        signal: hangUp.signal,
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          Authorization: `Bearer ${bearer}`,
          ...modern.headers,
        },
        body,
      }).catch((error: Error) => error);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.equal(await waitEndedAt(requestId, started), null, "still waiting before the hang-up");
      hangUp.abort();
      const abortedAt = Date.now();
      assert.ok((await call) instanceof Error);

      let ended: number | null = null;
      for (let tries = 0; tries < 50 && ended === null; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        ended = await waitEndedAt(requestId, started);
      }
      assert.ok(
        ended !== null && ended - abortedAt < 3000,
        `the wait ended ${ended === null ? "not within 5 s" : `${ended - abortedAt} ms`} after the hang-up, not after 30 s`,
      );
      assert.equal(
        (await db().agentRequest.findUniqueOrThrow({ where: { id: requestId } })).status,
        "pending",
        "the request itself is untouched",
      );
    });
  }

  it("at most 16 calls of one grant wait for the person at once; the others answer at once with the request as it stands", async () => {
    const requestId = await pendingRequest("waited on");

    const answered: string[] = [];
    const waits = Array.from({ length: 20 }, async (_, index) => {
      const call = { name: "get_request", arguments: { request_id: requestId, wait_seconds: 30 } };
      const reply = (await (
        await mcpPost(JSON.stringify({ jsonrpc: "2.0", id: index + 2, method: "tools/call", params: call }))
      ).json()) as {
        result: { structuredContent: { status: string } };
      };
      answered.push(reply.result.structuredContent.status);
    });
    for (let tries = 0; tries < 100 && answered.length < 4; tries++) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(answered, ["pending", "pending", "pending", "pending"], "four calls past the sixteen answered without waiting");

    const { userId } = await db().agentRequest.findUniqueOrThrow({ where: { id: requestId } });
    await rejectRequest(userId, requestId, "Not now");
    await Promise.all(waits);
    assert.deepEqual(answered.slice(4), Array(16).fill("rejected"), "the sixteen waiting calls report the decision");
  });

  it("the initialize handshake still works beside all this", async () => {
    assert.equal((await mcpPost(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: INITIALIZE_PARAMS }))).status, 200);
  });
});
