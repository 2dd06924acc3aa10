// A plain read call or tools/list, 2025-era or 2026-07-28, is answered past the SDK (lib/mcp/read-calls.ts, decision 0033), on SQLite
// (e2e/mcp/read-calls.test.ts) and PostgreSQL (e2e/postgres/read-calls.test.ts): each request here is answered by
// /mcp's handler as it serves, and by the same handler with every request served by the SDK, in this process against
// the app's database; status, headers and body bytes must be the same. The cases the path covers (reads that succeed
// and that fail as tools) are checked to be served past the SDK; the others (bad arguments, an unknown tool, an
// unsupported protocol version, a batch, a notification, progress, wrong headers, an envelope with more in it than a
// plain read's) to be left to the SDK, so that its answer stays the one it gave.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { isLegacyRequest } from "@modelcontextprotocol/server";
import { startApp, type RunningApp } from "./app";
import { createWatchCredential, obtainTokens } from "./oauth";
import { handleMcpRequest, handleMcpRequestBySdk } from "@/lib/mcp/handler";
import { answerPastTheSdk } from "@/lib/mcp/read-calls";
import { resolveBearer } from "@/lib/oauth/bearer";

type Case = { name: string; body: unknown; headers?: Record<string, string | null>; pastTheSdk: boolean };

const PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
const CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
const CLIENT_INFO = "io.modelcontextprotocol/clientInfo";
/** The per-request envelope a 2026-07-28 client sends (as the SDK's client and the bench do). */
const ENVELOPE = { [PROTOCOL_VERSION]: "2026-07-28", [CAPABILITIES]: {}, [CLIENT_INFO]: { name: "test", version: "1.0.0" } };

const call = (name: string, args?: Record<string, unknown>, id: unknown = 7) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, ...(args && { arguments: args }) },
});

export function readCallsSuite(database: "sqlite" | "postgres") {
  describe(`/mcp's read calls past the SDK (${database})`, () => {
    let app: RunningApp;
    let bearer = "";
    let credentialId = "";

    before(async () => {
      app = await startApp({ database });
      const granted = await obtainTokens(app, {
        credentials: async (userId) => {
          credentialId = (await createWatchCredential(userId, "Savings")).id;
          return [{ credentialId, mode: "read" }];
        },
      });
      bearer = granted.tokens.access_token;
    });
    after(async () => {
      await app?.stop();
    });

    function requestOf(body: unknown, headers: Record<string, string | null> = {}): Request {
      const sent: Record<string, string | null> = {
        Host: new URL(app.baseUrl).host,
        Authorization: `Bearer ${bearer}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
        ...headers,
      };
      const present = Object.entries(sent).filter((entry): entry is [string, string] => entry[1] !== null);
      return new Request(`${app.baseUrl}/mcp`, { method: "POST", headers: present, body: JSON.stringify(body) });
    }

    async function answered(response: Response) {
      return { status: response.status, headers: [...response.headers], body: Buffer.from(await response.arrayBuffer()) };
    }

    /** A 2026-07-28 call: the envelope in params._meta and the standard headers the body names. */
    function modern(name: string, args?: Record<string, unknown>, meta: Record<string, unknown> = ENVELOPE, id: unknown = 7) {
      const body = call(name, args, id);
      return {
        body: { ...body, params: { ...body.params, _meta: meta } },
        headers: { "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name } as Record<string, string | null>,
      };
    }
    const read = modern("list_credentials", {});
    const withMeta = (meta: Record<string, unknown>) => modern("list_credentials", {}, { ...ENVELOPE, ...meta });
    const withCapabilities = (capabilities: unknown) => withMeta({ [CAPABILITIES]: capabilities });
    const withParams = (params: Record<string, unknown>) => ({
      ...read,
      body: { ...read.body, params: { ...read.body.params, ...params } },
    });

    const modernCases = (): Case[] => [
      { name: "2026-07-28 list_credentials", ...read, pastTheSdk: true },
      { name: "2026-07-28 without arguments", ...modern("list_credentials"), pastTheSdk: true },
      { name: "2026-07-28 with a string id", ...modern("list_credentials", {}, ENVELOPE, "read-1"), pastTheSdk: true },
      {
        name: "2026-07-28 without clientInfo",
        ...modern("list_credentials", {}, { [PROTOCOL_VERSION]: "2026-07-28", [CAPABILITIES]: {} }),
        pastTheSdk: true,
      },
      { name: "2026-07-28 get_policy", ...modern("get_policy", { credential_id: credentialId }), pastTheSdk: true },
      { name: "2026-07-28 get_policy not granted", ...modern("get_policy", { credential_id: "nope" }), pastTheSdk: true },
      { name: "2026-07-28 get_balance not granted", ...modern("get_balance", { credential_id: "nope" }), pastTheSdk: true },
      { name: "2026-07-28 get_allowance", ...modern("get_allowance", { credential_id: credentialId }), pastTheSdk: true },
      { name: "2026-07-28 list_requests", ...modern("list_requests", { status: "pending" }), pastTheSdk: true },
      { name: "2026-07-28 bare elicitation", ...withCapabilities({ elicitation: {} }), pastTheSdk: true },
      { name: "2026-07-28 bare sampling and roots", ...withCapabilities({ sampling: {}, roots: {} }), pastTheSdk: true },
      { name: "2026-07-28 bare experimental and extensions", ...withCapabilities({ experimental: {}, extensions: {} }), pastTheSdk: true },
      { name: "2026-07-28 a bare tasks capability", ...withCapabilities({ tasks: {} }), pastTheSdk: false },
      { name: "2026-07-28 an unknown capability", ...withCapabilities({ example: {} }), pastTheSdk: false },
      { name: "2026-07-28 elicitation by URL", ...withCapabilities({ elicitation: { url: {} } }), pastTheSdk: false },
      { name: "2026-07-28 task capability", ...withCapabilities({ tasks: { requests: { tools: { call: {} } } } }), pastTheSdk: false },
      { name: "2026-07-28 capabilities not an object", ...withCapabilities("all"), pastTheSdk: false },
      { name: "2026-07-28 no capabilities", ...modern("list_credentials", {}, { [PROTOCOL_VERSION]: "2026-07-28" }), pastTheSdk: false },
      { name: "2026-07-28 a client title", ...withMeta({ [CLIENT_INFO]: { name: "t", version: "1", title: "T" } }), pastTheSdk: false },
      { name: "2026-07-28 a clientInfo without version", ...withMeta({ [CLIENT_INFO]: { name: "t" } }), pastTheSdk: false },
      { name: "2026-07-28 a log level", ...withMeta({ "io.modelcontextprotocol/logLevel": "debug" }), pastTheSdk: false },
      { name: "2026-07-28 a progress token", ...withMeta({ progressToken: 3 }), pastTheSdk: false },
      { name: "2026-07-28 an unknown _meta key", ...withMeta({ "example.com/trace": "x" }), pastTheSdk: false },
      { name: "2026-07-28 a task declaration", ...withParams({ task: { ttl: 60_000 } }), pastTheSdk: false },
      { name: "2026-07-28 an unknown params member", ...withParams({ extra: true }), pastTheSdk: false },
      { name: "2026-07-28 an extra message member", ...read, body: { ...read.body, extra: true }, pastTheSdk: false },
      { name: "2026-07-28 bad arguments", ...modern("list_requests", { status: "bogus" }), pastTheSdk: false },
      { name: "2026-07-28 a missing argument", ...modern("get_policy", {}), pastTheSdk: false },
      { name: "2026-07-28 arguments not an object", ...modern("list_credentials", [] as never), pastTheSdk: false },
      { name: "2026-07-28 an unknown tool", ...modern("no_such_tool", {}), pastTheSdk: false },
      { name: "2026-07-28 a sensitive tool", ...modern("sign_message", { credential_id: "nope", message: "hi" }), pastTheSdk: false },
      { name: "2026-07-28 a fractional id", ...modern("list_credentials", {}, ENVELOPE, 1.5), pastTheSdk: false },
      { name: "2026-07-28 an unsupported version", ...withMeta({ [PROTOCOL_VERSION]: "2099-01-01" }), pastTheSdk: false },
      {
        name: "2026-07-28 a version header that differs",
        ...read,
        headers: { ...read.headers, "MCP-Protocol-Version": "2025-11-25" },
        pastTheSdk: false,
      },
      { name: "2026-07-28 no version header", ...read, headers: { ...read.headers, "MCP-Protocol-Version": null }, pastTheSdk: false },
      { name: "2026-07-28 no Mcp-Method", ...read, headers: { ...read.headers, "Mcp-Method": null }, pastTheSdk: false },
      { name: "2026-07-28 a wrong Mcp-Method", ...read, headers: { ...read.headers, "Mcp-Method": "tools/list" }, pastTheSdk: false },
      { name: "2026-07-28 no Mcp-Name", ...read, headers: { ...read.headers, "Mcp-Name": null }, pastTheSdk: false },
      { name: "2026-07-28 a wrong Mcp-Name", ...read, headers: { ...read.headers, "Mcp-Name": "get_policy" }, pastTheSdk: false },
      {
        name: "2026-07-28 Mcp-Name in base64",
        ...read,
        headers: { ...read.headers, "Mcp-Name": `=?base64?${Buffer.from("list_credentials").toString("base64")}?=` },
        pastTheSdk: false,
      },
      {
        name: "2026-07-28 an Accept without event streams",
        ...read,
        headers: { ...read.headers, Accept: "application/json" },
        pastTheSdk: false,
      },
      {
        name: "2026-07-28 a batch",
        body: [read.body, modern("get_policy", { credential_id: credentialId }, ENVELOPE, 2).body],
        headers: read.headers,
        pastTheSdk: false,
      },
      {
        name: "2026-07-28 a notification",
        body: { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1, _meta: ENVELOPE } },
        headers: { ...read.headers, "Mcp-Method": "notifications/cancelled", "Mcp-Name": null },
        pastTheSdk: false,
      },
    ];

    const list = (params?: unknown, id: unknown = 9) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/list",
      ...(params !== undefined && { params }),
    });
    const modernList = (meta: unknown = ENVELOPE, headers: Record<string, string | null> = {}) => ({
      body: list({ _meta: meta }),
      headers: { "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list", ...headers } as Record<string, string | null>,
    });
    const listCases = (): Case[] => [
      { name: "tools/list", body: list(), pastTheSdk: true },
      { name: "tools/list with empty params", body: list({}), pastTheSdk: true },
      { name: "tools/list with a string id", body: list({}, "list-1"), pastTheSdk: true },
      { name: "tools/list 2025-11-25", body: list({}), headers: { "MCP-Protocol-Version": "2025-11-25" }, pastTheSdk: true },
      { name: "tools/list with a cursor", body: list({ cursor: "next" }), pastTheSdk: false },
      { name: "tools/list with a progress token", body: list({ _meta: { progressToken: 1 } }), pastTheSdk: false },
      { name: "tools/list with no id", body: { jsonrpc: "2.0", method: "tools/list" }, pastTheSdk: false },
      { name: "tools/list with an extra member", body: { ...list(), extra: 1 }, pastTheSdk: false },
      { name: "tools/list without event streams", body: list(), headers: { Accept: "application/json" }, pastTheSdk: false },
      { name: "2026-07-28 tools/list", ...modernList(), pastTheSdk: true },
      { name: "2026-07-28 tools/list with a number id", ...modernList(), body: list({ _meta: ENVELOPE }, 12), pastTheSdk: true },
      { name: "2026-07-28 tools/list with a cursor", ...modernList(), body: list({ _meta: ENVELOPE, cursor: "x" }), pastTheSdk: false },
      {
        name: "2026-07-28 tools/list with a log level",
        ...modernList({ ...ENVELOPE, "io.modelcontextprotocol/logLevel": "info" }),
        pastTheSdk: false,
      },
      { name: "2026-07-28 tools/list with an Mcp-Name", ...modernList(ENVELOPE, { "Mcp-Name": "list_credentials" }), pastTheSdk: false },
      { name: "2026-07-28 tools/list with a wrong Mcp-Method", ...modernList(ENVELOPE, { "Mcp-Method": "tools/call" }), pastTheSdk: false },
      { name: "2026-07-28 tools/list without its envelope", ...modernList(), body: list({}), pastTheSdk: false },
    ];

    const cases = (): Case[] => [
      ...modernCases(),
      ...listCases(),
      { name: "list_credentials", body: call("list_credentials", {}), pastTheSdk: true },
      { name: "list_credentials without arguments", body: call("list_credentials"), pastTheSdk: true },
      { name: "list_credentials with a string id", body: call("list_credentials", {}, "read-1"), pastTheSdk: true },
      { name: "no protocol version header", body: call("list_credentials"), headers: { "MCP-Protocol-Version": null }, pastTheSdk: true },
      { name: "2025-11-25", body: call("list_credentials"), headers: { "MCP-Protocol-Version": "2025-11-25" }, pastTheSdk: true },
      { name: "get_policy", body: call("get_policy", { credential_id: credentialId }), pastTheSdk: true },
      { name: "get_policy of a credential not granted", body: call("get_policy", { credential_id: "nope" }), pastTheSdk: true },
      { name: "get_balance of a credential not granted", body: call("get_balance", { credential_id: "nope" }), pastTheSdk: true },
      { name: "get_allowance", body: call("get_allowance", { credential_id: credentialId }), pastTheSdk: true },
      { name: "list_requests", body: call("list_requests", { status: "pending" }), pastTheSdk: true },
      { name: "bad arguments", body: call("list_requests", { status: "bogus" }), pastTheSdk: false },
      { name: "a missing argument", body: call("get_policy", {}), pastTheSdk: false },
      { name: "arguments that are not an object", body: call("list_credentials", [] as never), pastTheSdk: false },
      { name: "an unknown tool", body: call("no_such_tool", {}), pastTheSdk: false },
      { name: "a sensitive tool", body: call("sign_message", { credential_id: "nope", message: "hi" }), pastTheSdk: false },
      { name: "an id that is no integer", body: call("list_credentials", {}, 1.5), pastTheSdk: false },
      { name: "no id", body: { jsonrpc: "2.0", method: "tools/call", params: { name: "list_credentials" } }, pastTheSdk: false },
      {
        name: "an unsupported protocol version header",
        body: call("list_credentials"),
        headers: { "MCP-Protocol-Version": "1999-01-01" },
        pastTheSdk: false,
      },
      {
        name: "a batch",
        body: [call("list_credentials", {}, 1), call("get_policy", { credential_id: credentialId }, 2)],
        pastTheSdk: false,
      },
      { name: "a notification", body: { jsonrpc: "2.0", method: "notifications/initialized" }, pastTheSdk: false },
      {
        name: "a call with a progress token (an event stream)",
        body: { ...call("list_credentials"), params: { name: "list_credentials", _meta: { progressToken: 3 } } },
        pastTheSdk: false,
      },
      { name: "an extra member", body: { ...call("list_credentials"), extra: true }, pastTheSdk: false },
      { name: "JSON-RPC 1.0", body: { ...call("list_credentials"), jsonrpc: "1.0" }, pastTheSdk: false },
      {
        name: "an Accept without event streams",
        body: call("list_credentials"),
        headers: { Accept: "application/json" },
        pastTheSdk: false,
      },
      { name: "a text body", body: call("list_credentials"), headers: { "Content-Type": "text/plain" }, pastTheSdk: false },
    ];

    it("answers every case byte for byte as the SDK does", async () => {
      const agent = await resolveBearer(`Bearer ${bearer}`);
      for (const each of cases()) {
        const served = await answered(await handleMcpRequest(requestOf(each.body, each.headers)));
        const bySdk = await answered(await handleMcpRequestBySdk(requestOf(each.body, each.headers)));
        assert.deepEqual(served.status, bySdk.status, each.name);
        assert.deepEqual(served.headers, bySdk.headers, each.name);
        assert.equal(served.body.toString("utf8"), bySdk.body.toString("utf8"), each.name);
        assert.ok(served.body.equals(bySdk.body), each.name);
        const request = requestOf(each.body, each.headers);
        const parsed: unknown = JSON.parse(await request.text());
        const past = await answerPastTheSdk(request, parsed, agent, await isLegacyRequest(request, parsed));
        assert.equal(past !== undefined, each.pastTheSdk, `${each.name}: ${each.pastTheSdk ? "served past the SDK" : "left to the SDK"}`);
      }
    });

    it("answers a read of either era over HTTP with the SDK's body and the app's headers", async () => {
      for (const each of [{ body: call("list_credentials", {}), headers: {} }, modern("list_credentials", {})]) {
        const headers = [...requestOf(each.body, each.headers).headers];
        const response = await fetch(`${app.baseUrl}/mcp`, { method: "POST", headers, body: JSON.stringify(each.body) });
        const bySdk = await handleMcpRequestBySdk(requestOf(each.body, each.headers));
        assert.equal(response.status, 200);
        assert.equal(response.headers.get("content-type"), "application/json");
        assert.equal(response.headers.get("access-control-allow-origin"), "*");
        assert.equal(response.headers.get("x-content-type-options"), "nosniff");
        const text = await response.text();
        assert.equal(text, await bySdk.text());
        const result = (JSON.parse(text) as { result: { structuredContent: { credentials: { id: string }[] } } }).result;
        assert.deepEqual(
          result.structuredContent.credentials.map((credential) => credential.id),
          [credentialId],
        );
      }
    });
  });
}
