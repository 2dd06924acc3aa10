import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ProtocolError, type CallToolResult, type Client, type InputRequiredResult } from "@modelcontextprotocol/client";
import type { ServerContext } from "@modelcontextprotocol/server";
import { startApp, type RunningApp } from "../support/app";
import { connectModern, connectWithBearer, type UrlElicitation } from "../support/mcp-client";
import { signerGrant } from "../support/oauth";
import { db } from "@/lib/db";
import { randomId } from "@/lib/crypto";
import { approvalStateCodec } from "@/lib/mcp/elicited-approval";
import type { RequestView } from "@/contract";

function requestView(result: CallToolResult): RequestView {
  assert.ok(!result.isError, JSON.stringify(result.content));
  return result.structuredContent as RequestView;
}

/** One tools/call leg by hand (manual mode), returning the input_required answer or the result as it came. */
function callLeg(client: Client, params: Record<string, unknown>): Promise<CallToolResult | InputRequiredResult> {
  return client.request({ method: "tools/call", params } as never, { allowInputRequired: true }) as Promise<
    CallToolResult | InputRequiredResult
  >;
}

async function expectInvalidState(leg: Promise<unknown>) {
  await assert.rejects(leg, (error: unknown) => {
    assert.ok(error instanceof ProtocolError, String(error));
    assert.equal(error.code, -32602);
    assert.match(error.message, /requestState/);
    return true;
  });
}

describe("2026-07-28 clients beside 2025-11-25 ones on /mcp", { timeout: 120_000 }, () => {
  let app: RunningApp;
  let grant: Awaited<ReturnType<typeof signerGrant>>;
  const clients: { close(): Promise<void> }[] = [];
  const message = (label: string) => ({ credential_id: grant.credentialId, message: `modern ${label} ${randomId()}` });

  before(async () => {
    app = await startApp();
    grant = await signerGrant(app);
  });
  after(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await app?.stop();
  });

  async function modern(options: Parameters<typeof connectModern>[2] = {}, bearer = grant.bearer) {
    const client = await connectModern(app.baseUrl, bearer, options);
    clients.push(client);
    return client;
  }

  it("answers server/discover: the client negotiates 2026-07-28 and sees the server's tools", async () => {
    const client = await modern();
    assert.equal(client.getProtocolEra(), "modern");
    assert.ok(client.getDiscoverResult(), "a server/discover result");
    assert.equal(client.getServerVersion()?.name, "agent-wallet");
    const { tools } = await client.listTools();
    assert.ok(tools.some((tool) => tool.name === "sign_message" && tool.outputSchema));
    const { credentials } = (await client.callTool({ name: "list_credentials", arguments: {} })).structuredContent as {
      credentials: { id: string }[];
    };
    assert.deepEqual(
      credentials.map((credential) => credential.id),
      [grant.credentialId],
    );
  });

  it("a modern client without URL elicitation gets the plain pending request, and polls it", async () => {
    const client = await modern();
    const view = requestView(await client.callTool({ name: "sign_message", arguments: message("plain") }));
    assert.equal(view.status, "pending");
    assert.equal(view.approval_url, `${app.appUrl}/approvals/${view.request_id}`);
    const polled = requestView(await client.callTool({ name: "get_request", arguments: { request_id: view.request_id } }));
    assert.equal(polled.status, "pending");
  });

  it("a modern call without a progress token is answered with plain JSON", async () => {
    const response = await fetch(`${app.baseUrl}/mcp`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${grant.bearer}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "list_credentials",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "list_credentials",
          arguments: {},
          _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} },
        },
      }),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
    const body = (await response.json()) as { result: { resultType: string; structuredContent: { credentials: unknown[] } } };
    assert.equal(body.result.resultType, "complete");
    assert.equal(body.result.structuredContent.credentials.length, 1);
  });

  it("a modern call that asks for progress gets it while it waits (an event stream)", async () => {
    const client = await modern();
    const view = requestView(await client.callTool({ name: "sign_message", arguments: message("progress") }));
    const progress: number[] = [];
    const waited = requestView(
      await client.callTool(
        { name: "get_request", arguments: { request_id: view.request_id, wait_seconds: 2 } },
        { onprogress: ({ progress: elapsed }) => progress.push(elapsed) },
      ),
    );
    assert.equal(waited.status, "pending");
    assert.ok(progress.length >= 1, "progress notifications while waiting");
  });

  it("a URL-elicitation client is sent to the approval page; still pending after its rounds, it ends with the pending view", async () => {
    const asked: UrlElicitation[] = [];
    const client = await modern({ onUrlElicitation: async (request) => (asked.push(request), "accept") });
    const before = await db().agentRequest.count({ where: { grantId: grant.grantId } });
    const view = requestView(await client.callTool({ name: "sign_message", arguments: { ...message("rounds"), wait_seconds: 1 } }));
    assert.equal(view.status, "pending");
    assert.equal(asked.length, 1, "one elicitation: later rounds only wait");
    assert.equal(asked[0].url, view.approval_url);
    assert.equal(await db().agentRequest.count({ where: { grantId: grant.grantId } }), before + 1, "exactly one request");
    const outcomes = await db().auditEvent.findMany({ where: { requestId: view.request_id, type: "mcp.tool_called" } });
    assert.ok(outcomes.some((event) => JSON.parse(event.data).outcome === "input_required"));
  });

  it("a declined elicitation cancels the request", async () => {
    const client = await modern({ onUrlElicitation: async () => "decline" });
    const view = requestView(await client.callTool({ name: "sign_message", arguments: message("declined") }));
    assert.equal(view.status, "cancelled");
    assert.equal((await db().agentRequest.findUniqueOrThrow({ where: { id: view.request_id } })).status, "cancelled");
  });

  it("refuses a tampered, expired or foreign requestState with -32602, and never creates a second request", async () => {
    const client = await modern({ onUrlElicitation: async () => "accept", manual: true });
    const params = { name: "sign_message", arguments: message("manual") };
    const first = (await callLeg(client, params)) as InputRequiredResult;
    assert.equal(first.resultType, "input_required");
    const approval = first.inputRequests?.approval as { method: string; params: { mode: string; url: string } };
    assert.equal(approval.method, "elicitation/create");
    assert.equal(approval.params.mode, "url");
    const requestId = approval.params.url.split("/").pop()!;
    const state = first.requestState!;
    const count = () => db().agentRequest.count({ where: { grantId: grant.grantId } });
    const requests = await count();

    // The genuine state, answered: the retry reports on the same request.
    const retried = await callLeg(client, {
      ...params,
      arguments: { ...params.arguments, wait_seconds: 0 },
      inputResponses: { approval: { action: "accept" } },
      requestState: state,
    });
    assert.equal((retried as InputRequiredResult).resultType, "input_required");
    assert.equal(await count(), requests);

    const tampered = `${state.slice(0, 10)}${state[10] === "A" ? "B" : "A"}${state.slice(11)}`;
    await expectInvalidState(callLeg(client, { ...params, requestState: tampered }));

    const other = await signerGrant(app);
    const foreign = await modern({ onUrlElicitation: async () => "accept", manual: true }, other.bearer);
    await expectInvalidState(
      callLeg(foreign, { ...params, arguments: { ...params.arguments, credential_id: other.credentialId }, requestState: state }),
    );

    // Minted like the server's own, with the same binding, but for one second only.
    const principal = {
      http: { authInfo: { extra: { agent: { clientId: grant.clientId, grantId: grant.grantId } } } },
    } as unknown as ServerContext;
    const valid = await approvalStateCodec().mint({ request_id: requestId, round: 1 }, principal);
    assert.equal(
      (
        (await callLeg(client, {
          ...params,
          arguments: { ...params.arguments, wait_seconds: 0 },
          requestState: valid,
        })) as InputRequiredResult
      ).resultType,
      "input_required",
    );
    const shortLived = await approvalStateCodec(1).mint({ request_id: requestId, round: 1 }, principal);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    await expectInvalidState(callLeg(client, { ...params, requestState: shortLived }));

    assert.equal(await count(), requests, "no retry created a request");
    assert.equal((await db().agentRequest.findUniqueOrThrow({ where: { id: requestId } })).status, "pending");
  });

  it("a 2025-11-25 client (initialize, no envelope) still gets today's plain result, even when it declares URL elicitation", async () => {
    const client = await connectWithBearer(app.baseUrl, grant.bearer, { elicitation: { url: {} } });
    clients.push(client);
    assert.equal(client.getServerVersion()?.name, "agent-wallet");
    const result = (await client.callTool({ name: "sign_message", arguments: message("legacy") })) as CallToolResult;
    const view = requestView(result);
    assert.equal(view.status, "pending");
    assert.equal(view.approval_url, `${app.appUrl}/approvals/${view.request_id}`);
    const cancelled = requestView(
      (await client.callTool({ name: "cancel_request", arguments: { request_id: view.request_id } })) as CallToolResult,
    );
    assert.equal(cancelled.status, "cancelled");
  });
});
