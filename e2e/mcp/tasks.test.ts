// MCP tasks for the sensitive tools, over real HTTP against the started app, with real requesters: the
// ext-tasks client (both generations), the SDK v1 client's experimental tasks API (2025-11-25) and the SDK v2
// client (2026-07-28). The person's approval with a passkey is e2e/browser/task-approval.test.ts.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient, type TaskEnabledSession, type ToolExecution } from "@modelcontextprotocol/ext-tasks/client";
import type { JsonValue } from "@modelcontextprotocol/ext-tasks/core";
import { startApp, type RunningApp } from "../support/app";
import { connectModern, connectWithBearer } from "../support/mcp-client";
import { rawDispatch } from "../support/task-dispatch";
import { signerGrant } from "../support/oauth";
import { db } from "@/lib/db";
import { randomId } from "@/lib/crypto";
import type { RequestView } from "@/contract";

const NINETY_DAYS_MS = 90 * 24 * 3_600_000;
const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

type Grant = Awaited<ReturnType<typeof signerGrant>>;

/** A v2 SDK client pinned to an era, as the ext-tasks client expects to be handed one. */
async function sdkClient(app: RunningApp, bearer: string, version: "2025-11-25" | "2026-07-28") {
  const mode = version === "2025-11-25" ? ("legacy" as const) : { pin: version };
  const client = new ModernClient({ name: "e2e-task-agent", version: "1.0.0" }, { versionNegotiation: { mode } });
  await client.connect(
    new ModernTransport(new URL(`${app.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${bearer}` } } }),
  );
  return client;
}

/** One raw 2026-07-28 JSON-RPC call, for what no client sends on purpose (a request without the extension). */
async function modernCall(app: RunningApp, bearer: string, method: string, params: Record<string, unknown>, capabilities = {}) {
  const response = await rawDispatch(
    app,
    bearer,
  )({
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
        "io.modelcontextprotocol/clientCapabilities": capabilities,
      },
    },
  } as JsonValue);
  return response;
}

async function expectCode(promise: Promise<unknown>, code: number) {
  await assert.rejects(promise, (error: unknown) => {
    assert.equal((error as { code?: number }).code, code, String(error));
    return true;
  });
}

describe("MCP tasks for sensitive tools", { timeout: 180_000 }, () => {
  let app: RunningApp;
  let grant: Grant;
  let other: Grant;
  let foreignRequestId = "";
  const closers: { close(): Promise<void> }[] = [];
  const message = (label: string) => ({ credential_id: grant.credentialId, message: `task ${label} ${randomId()}` });

  before(async () => {
    app = await startApp();
    grant = await signerGrant(app);
    other = await signerGrant(app);
    const otherClient = await connectWithBearer(app.baseUrl, other.bearer);
    closers.push(otherClient);
    const foreign = await otherClient.callTool({
      name: "sign_message",
      arguments: { credential_id: other.credentialId, message: "another grant's request" },
    });
    foreignRequestId = (foreign.structuredContent as RequestView).request_id;
  });
  after(async () => {
    await Promise.all(closers.map((closer) => closer.close().catch(() => {})));
    await app?.stop();
  });

  async function getRequest(requestId: string): Promise<RequestView> {
    const client = await connectWithBearer(app.baseUrl, grant.bearer);
    closers.push(client);
    return (await client.callTool({ name: "get_request", arguments: { request_id: requestId } })).structuredContent as RequestView;
  }

  async function expire(requestId: string) {
    await db().agentRequest.update({ where: { id: requestId }, data: { expiresAt: new Date(Date.now() - 1000) } });
  }

  describe("2025-11-25", () => {
    let session: TaskEnabledSession;

    before(async () => {
      const client = await sdkClient(app, grant.bearer, "2025-11-25");
      session = createTaskSessionFromClient(client, { endpointId: "tasks-2025" });
      closers.push(session, client);
    });

    async function taskCall(label: string): Promise<ToolExecution<unknown> & { kind: "task" }> {
      const execution = await session.callTool("sign_message", message(label), { task: { preference: "require" } });
      assert.equal(execution.kind, "task");
      return execution as ToolExecution<unknown> & { kind: "task" };
    }

    it("advertises tasks at initialize, and task support on the sensitive tools only", async () => {
      const client = await connectWithBearer(app.baseUrl, grant.bearer);
      closers.push(client);
      assert.deepEqual(client.getServerCapabilities()?.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });
      assert.equal(client.getServerCapabilities()?.extensions, undefined, "the 2026-07-28 extension is not offered to 2025 clients");
      const { tools } = await client.listTools();
      const support = Object.fromEntries(tools.map((tool) => [tool.name, tool.execution?.taskSupport]));
      assert.deepEqual(support, {
        list_credentials: undefined,
        get_balance: undefined,
        sign_message: "optional",
        sign_typed_data: "optional",
        send_transaction: "optional",
        get_request: undefined,
        list_requests: undefined,
        cancel_request: undefined,
        get_policy: undefined,
        get_allowance: undefined,
        // signed at once within an allowance, or refused: nothing to wait for
        pay_x402: undefined,
        // a request followed with get_request (no task), and a slice recorded at once
        request_allowance: undefined,
        register_allowance_slice: undefined,
        // a leaf prepared at once, and a payment sent at once or refused
        prepare_allowance_payment: undefined,
        send_allowance_payment: undefined,
      });
      assert.deepEqual(session.capabilities, {
        inventory: "server-list",
        execution: true,
        cancellation: true,
        inputResponses: false,
        requestedRetention: true,
      });
    });

    it("a sensitive call becomes a task whose id is the request id, working while the person has not decided", async () => {
      const execution = await taskCall("working");
      const taskId = execution.handle.taskId;
      const task = await session.task(taskId).snapshot();
      await session.listTasks();
      await execution.detach();
      const audited = await db().auditEvent.findMany({ where: { requestId: taskId, type: "mcp.tool_called" } });
      assert.equal(audited.length, 1, "the task's creation is the audited tool call; polls add nothing");
      assert.match(audited[0].data, /"tool":"sign_message"/);

      const view = await getRequest(taskId);
      assert.equal(view.request_id, taskId);
      assert.equal(view.status, "pending");
      assert.equal(task.status, "working");
      assert.equal(task.statusMessage, `Waiting for approval at ${view.approval_url}`);
      assert.equal(task.retentionMs, NINETY_DAYS_MS);
      assert.equal(task.createdAt, view.created_at);
    });

    it("cancelling the task cancels the request; a second cancel is invalid params", async () => {
      const execution = await taskCall("cancel");
      const taskId = execution.handle.taskId;
      await execution.cancel();
      assert.equal((await getRequest(taskId)).status, "cancelled");
      const client = await connectWithBearer(app.baseUrl, grant.bearer);
      closers.push(client);
      assert.equal((await client.experimental.tasks.getTask(taskId)).status, "cancelled");
      await expectCode(client.experimental.tasks.cancelTask(taskId), -32602);
    });

    it("an expired request is a failed task whose result is the tool error with the request, related to the task", async () => {
      const execution = await taskCall("expired");
      const taskId = execution.handle.taskId;
      await execution.detach();
      await expire(taskId);
      const client = await connectWithBearer(app.baseUrl, grant.bearer);
      closers.push(client);
      const task = await client.experimental.tasks.getTask(taskId);
      assert.equal(task.status, "failed");
      assert.match(task.statusMessage ?? "", /expired/);
      const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      assert.equal(result.isError, true);
      assert.equal((result.structuredContent as RequestView).status, "expired");
      assert.deepEqual(result._meta?.["io.modelcontextprotocol/related-task"], { taskId });
    });

    it("tasks/list pages through this grant's requests only, with the spec's cursor", async () => {
      const execution = await taskCall("listed");
      await execution.detach();
      // More than a page of older requests, written directly: the listing is what is tested here.
      const base = Date.now() - 3_600_000;
      const { userId } = await db().grant.findUniqueOrThrow({ where: { id: grant.grantId } });
      await db().agentRequest.createMany({
        data: Array.from({ length: 60 }, (_, index) => ({
          id: randomId("rq_"),
          userId,
          grantId: grant.grantId,
          clientId: grant.clientId,
          credentialId: grant.credentialId,
          kind: "sign_message",
          status: "cancelled",
          payload: "{}",
          digest: "00",
          createdAt: new Date(base + index * 1000),
          expiresAt: new Date(base + index * 1000 + 600_000),
        })),
      });
      const expected = await db().agentRequest.findMany({ where: { grantId: grant.grantId }, select: { id: true } });
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await session.listTasks(cursor);
        seen.push(...page.tasks.map((task) => task.taskId));
        cursor = page.nextCursor;
        pages++;
      } while (cursor);
      assert.ok(pages >= 2, "more than one page");
      assert.equal(new Set(seen).size, seen.length, "no task twice");
      assert.deepEqual([...seen].sort(), expected.map((row) => row.id).sort());
      assert.ok(seen.includes(execution.handle.taskId));
      assert.ok(!seen.includes(foreignRequestId), "another grant's request is not listed");

      const client = await connectWithBearer(app.baseUrl, grant.bearer);
      closers.push(client);
      await expectCode(client.experimental.tasks.listTasks("not-a-cursor"), -32602);
    });

    it("an unknown task id, and another grant's request id, are invalid params", async () => {
      const client = await connectWithBearer(app.baseUrl, grant.bearer);
      closers.push(client);
      for (const taskId of [foreignRequestId, "rq_unknown"]) {
        await expectCode(client.experimental.tasks.getTask(taskId), -32602);
        await expectCode(client.experimental.tasks.cancelTask(taskId), -32602);
        await expectCode(client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema), -32602);
      }
      assert.equal((await db().agentRequest.findUniqueOrThrow({ where: { id: foreignRequestId } })).status, "pending");
    });

    it("the SDK v1 client's task stream: the task, then its failure once the request expired", async () => {
      const client = await connectWithBearer(app.baseUrl, grant.bearer);
      closers.push(client);
      const seen: string[] = [];
      let taskId = "";
      for await (const event of client.experimental.tasks.callToolStream(
        { name: "sign_message", arguments: message("stream") },
        CallToolResultSchema,
        { task: {} },
      )) {
        seen.push(event.type);
        if (event.type === "taskCreated") {
          taskId = event.task.taskId;
          await expire(taskId);
        }
        if (event.type === "error") assert.match(event.error.message, /failed/);
      }
      assert.equal(seen[0], "taskCreated");
      assert.equal(seen.at(-1), "error");
      assert.equal((await getRequest(taskId)).status, "expired");
    });

    it("a tool without task support called as a task is refused with -32601", async () => {
      const client = await connectWithBearer(app.baseUrl, grant.bearer);
      closers.push(client);
      await expectCode(
        client.request({ method: "tools/call", params: { name: "list_credentials", arguments: {}, task: {} } }, CallToolResultSchema),
        -32601,
      );
    });

    it("a client that asks for no task still gets the plain pending request with its approval_url", async () => {
      const client = await connectWithBearer(app.baseUrl, grant.bearer);
      closers.push(client);
      const result = await client.callTool({ name: "sign_message", arguments: message("plain") });
      const view = result.structuredContent as RequestView;
      assert.equal(view.status, "pending");
      assert.equal(view.approval_url, `${app.appUrl}/approvals/${view.request_id}`);
      assert.ok(!(result as { task?: unknown }).task);
    });
  });

  describe("2026-07-28 (the tasks extension)", () => {
    let session: TaskEnabledSession;

    before(async () => {
      const client = await sdkClient(app, grant.bearer, "2026-07-28");
      session = createTaskSessionFromClient(client, {
        endpointId: "tasks-2026",
        rawDispatch: rawDispatch(app, grant.bearer),
        v2RequestFraming: {
          protocolVersion: "2026-07-28",
          clientInfo: { name: "e2e-task-agent", version: "1.0.0" },
          clientCapabilities: {},
        },
      });
      closers.push(session, client);
    });

    async function taskCall(label: string): Promise<ToolExecution<unknown> & { kind: "task" }> {
      const execution = await session.callTool("sign_message", message(label));
      assert.equal(execution.kind, "task");
      return execution as ToolExecution<unknown> & { kind: "task" };
    }

    it("advertises the tasks extension at server/discover, and not the 2025 capability", async () => {
      const client = await connectModern(app.baseUrl, grant.bearer);
      closers.push(client);
      assert.deepEqual(client.getServerCapabilities()?.extensions, { [TASKS_EXTENSION]: {} });
      assert.equal((client.getServerCapabilities() as { tasks?: unknown }).tasks, undefined);
      assert.equal(session.capabilities.execution, true);
      assert.equal(session.capabilities.cancellation, true);
    });

    it("a sensitive call becomes a task whose id is the request id; tasks/get says working", async () => {
      const execution = await taskCall("working");
      const taskId = execution.handle.taskId;
      const view = await getRequest(taskId);
      assert.equal(view.status, "pending");
      const task = await session.task(taskId).snapshot();
      assert.equal(task.status, "working");
      assert.equal(task.statusMessage, `Waiting for approval at ${view.approval_url}`);
      assert.equal(task.retentionMs, NINETY_DAYS_MS);
      assert.equal(task.raw.ttl, undefined, "no 2025-era fields");
      await execution.detach();
    });

    it("the created task is the flat CreateTaskResult, integer milliseconds and no 2025-era fields", async () => {
      const response = await modernCall(
        app,
        grant.bearer,
        "tools/call",
        { name: "sign_message", arguments: message("flat") },
        { extensions: { [TASKS_EXTENSION]: {} }, elicitation: { url: {} } },
      );
      assert.equal(response.kind, "result");
      const result = (response as { result: Record<string, unknown> }).result;
      assert.equal(result.resultType, "task", "a task, not a URL elicitation, when the client declared both");
      assert.equal(result.status, "working");
      assert.ok(Number.isInteger(result.ttlMs) && Number.isInteger(result.pollIntervalMs));
      for (const absent of ["ttl", "pollInterval", "requestState", "task", "content", "inputRequests"])
        assert.ok(!(absent in result), absent);
      assert.equal((await getRequest(result.taskId as string)).status, "pending");
    });

    it("cancelling the task cancels the request, and cancelling again is acknowledged", async () => {
      const execution = await taskCall("cancel");
      const taskId = execution.handle.taskId;
      await execution.cancel();
      assert.equal((await getRequest(taskId)).status, "cancelled");
      assert.equal((await session.task(taskId).snapshot()).status, "cancelled");
      await session.task(taskId).cancel();
    });

    it("an expired request completes the task with the tool error inlined", async () => {
      const execution = await taskCall("expired");
      const taskId = execution.handle.taskId;
      await expire(taskId);
      const { outcome } = await execution.settle();
      assert.equal(outcome.status, "completed");
      const result = (outcome as { result: { isError?: boolean; structuredContent?: RequestView } }).result;
      assert.equal(result.isError, true);
      assert.equal(result.structuredContent?.status, "expired");
      assert.equal(result.structuredContent?.request_id, taskId);
    });

    it("an unknown task id, and another grant's request id, are invalid params", async () => {
      const capabilities = { extensions: { [TASKS_EXTENSION]: {} } };
      for (const taskId of [foreignRequestId, "rq_unknown"]) {
        for (const method of ["tasks/get", "tasks/cancel"]) {
          const response = await modernCall(app, grant.bearer, method, { taskId }, capabilities);
          assert.equal(response.kind, "error", `${method} ${taskId}`);
          assert.equal((response as { error: { code: number } }).error.code, -32602);
        }
      }
      assert.equal((await db().agentRequest.findUniqueOrThrow({ where: { id: foreignRequestId } })).status, "pending");
    });

    it("tasks/* without the extension declared is refused with -32021", async () => {
      const execution = await taskCall("undeclared");
      await execution.detach();
      for (const method of ["tasks/get", "tasks/cancel"]) {
        const response = await modernCall(app, grant.bearer, method, { taskId: execution.handle.taskId });
        assert.equal(response.kind, "error", method);
        assert.equal((response as { error: { code: number } }).error.code, -32021);
      }
      assert.equal((await getRequest(execution.handle.taskId)).status, "pending", "nothing cancelled");
    });

    it("a client that did not declare the extension still gets the plain pending request", async () => {
      const client = await connectModern(app.baseUrl, grant.bearer);
      closers.push(client);
      const result = await client.callTool({ name: "sign_message", arguments: message("plain") });
      const view = result.structuredContent as RequestView;
      assert.equal(view.status, "pending");
      assert.equal(view.approval_url, `${app.appUrl}/approvals/${view.request_id}`);
    });
  });
});
