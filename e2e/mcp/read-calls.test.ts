// A plain 2025-era read call is answered past the SDK (lib/mcp/read-calls.ts, decision 0033): each request here is
// answered by /mcp's handler as it serves, and by the same handler with every request served by the SDK, in this
// process against the app's database; status, headers and body bytes must be the same. The cases the path covers
// (reads that succeed and that fail as tools) are checked to be served past the SDK; the others (bad arguments, an
// unknown tool, an unsupported protocol version header, a batch, a notification, progress, wrong headers) to be left
// to the SDK, so that its answer stays the one it always gave.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startApp, type RunningApp } from "../support/app";
import { createWatchCredential, obtainTokens } from "../support/oauth";
import { handleMcpRequest, handleMcpRequestBySdk } from "@/lib/mcp/handler";
import { answerPlainRead } from "@/lib/mcp/read-calls";
import { resolveBearer } from "@/lib/oauth/bearer";

type Case = { name: string; body: unknown; headers?: Record<string, string | null>; pastTheSdk: boolean };

const call = (name: string, args?: Record<string, unknown>, id: unknown = 7) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, ...(args && { arguments: args }) },
});

describe("/mcp's read calls past the SDK", () => {
  let app: RunningApp;
  let bearer = "";
  let credentialId = "";

  before(async () => {
    app = await startApp();
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

  const cases = (): Case[] => [
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
    { name: "a batch", body: [call("list_credentials", {}, 1), call("get_policy", { credential_id: credentialId }, 2)], pastTheSdk: false },
    { name: "a notification", body: { jsonrpc: "2.0", method: "notifications/initialized" }, pastTheSdk: false },
    {
      name: "a call with a progress token (an event stream)",
      body: { ...call("list_credentials"), params: { name: "list_credentials", _meta: { progressToken: 3 } } },
      pastTheSdk: false,
    },
    { name: "an extra member", body: { ...call("list_credentials"), extra: true }, pastTheSdk: false },
    { name: "JSON-RPC 1.0", body: { ...call("list_credentials"), jsonrpc: "1.0" }, pastTheSdk: false },
    { name: "an Accept without event streams", body: call("list_credentials"), headers: { Accept: "application/json" }, pastTheSdk: false },
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
      const past = await answerPlainRead(request, JSON.parse(await request.text()), agent);
      assert.equal(past !== undefined, each.pastTheSdk, `${each.name}: ${each.pastTheSdk ? "served past the SDK" : "left to the SDK"}`);
    }
  });

  it("answers a read over HTTP with the SDK's body and the app's headers", async () => {
    const body = call("list_credentials", {});
    const headers = [...requestOf(body).headers];
    const response = await fetch(`${app.baseUrl}/mcp`, { method: "POST", headers, body: JSON.stringify(body) });
    const bySdk = await handleMcpRequestBySdk(requestOf(body));
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
  });
});
