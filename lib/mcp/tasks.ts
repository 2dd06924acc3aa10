// MCP tasks for the sensitive tools (docs/decisions/0010): a task is the agent request the call created, seen
// through the tasks wire of the client's era. Its id is the request id, its status follows the request's, its
// result is the tool's answer for the request's view and cancelling it cancels the request. Nothing is kept
// beside the request: the database already makes it durable and shared by every instance, and scoped to the
// grant, so another grant's request id is simply an unknown task.
import {
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  RELATED_TASK_META_KEY,
  type CallToolResult,
  type McpServer,
  type ProtocolEra,
  type ServerContext,
} from "@modelcontextprotocol/server";
import {
  CancelTaskRequestV1Schema,
  GetTaskRequestV1Schema,
  GetTaskResultRequestV1Schema,
  ListTasksRequestV1Schema,
  type CancelTaskResultV1,
  type GetTaskResultV1,
  type ListTasksResultV1,
  type TaskStatusV1,
  type TaskV1,
} from "@modelcontextprotocol/ext-tasks/core/v1";
import {
  CancelTaskRequestV2Schema,
  GetTaskRequestV2Schema,
  hasTaskClientCapabilityV2,
  TASKS_EXTENSION_ID_V2,
  type CancelTaskResultV2,
  type CreateTaskResultV2,
  type DetailedTaskV2,
} from "@modelcontextprotocol/ext-tasks/core/v2";
import type { AgentContext } from "@/lib/wallet/agent-context";
import { NotFoundError } from "@/lib/http/errors";
import { RETENTION } from "@/lib/db/sweep";
import { RequestError } from "@/lib/wallet/request-lifecycle";
import {
  cancelRequest,
  getRequestRecord,
  pageRequests,
  waitForDecision,
  type RequestPosition,
  type RequestRecord,
} from "@/lib/wallet/requests";
import { isFinalStatus, REQUEST_STATUSES, type RequestView } from "@/contract";
import { hangUpSignal } from "./caller";

/** A task lives as long as its request stays readable: the sweep deletes decided requests this long after creation. */
const TASK_TTL_MS = RETENTION.agentRequest;

/** How often a client should poll: a person takes seconds to approve; faster polling only costs. */
const POLL_INTERVAL_MS = 2_000;

/** tasks/list page size. */
const PAGE_SIZE = 50;

/**
 * How long tasks/result holds the call: a request still pending expires within its 10-minute lifetime, so this
 * bounds the wait only for a transaction that stays unmined; the client's hang-up ends it sooner.
 */
const RESULT_WAIT_SECONDS = 15 * 60;

export function isRequestView(value: unknown): value is RequestView {
  const view = value as RequestView | undefined;
  return typeof view?.request_id === "string" && REQUEST_STATUSES.includes(view.status);
}

/** What the task says while it runs and why it ended: the approval URL carries no secret (the page checks the person). */
function statusMessage(view: RequestView): string {
  switch (view.status) {
    case "pending":
      return `Waiting for approval at ${view.approval_url}`;
    case "approved":
      return "Approved; being signed";
    case "submitted":
      return `Transaction ${view.tx_hash} sent; waiting for it to be mined`;
    case "completed":
      return "Completed";
    default:
      return `Request ${view.status}${view.reason ? `: ${view.reason}` : ""}`;
  }
}

/**
 * The tool's answer for the request's view, as a call waiting for the decision would have returned it: the
 * view as structured content, and a tool error when the request ended without its signature or transaction.
 */
function toolResultOf(view: RequestView): CallToolResult {
  const result: CallToolResult = { content: [{ type: "text", text: JSON.stringify(view) }], structuredContent: view };
  return view.status === "completed" ? result : { ...result, isError: true, content: [{ type: "text", text: statusMessage(view) }] };
}

// ---------- 2025-11-25 tasks ----------

/** A rejected, expired or failed request is a failed task; the others map by meaning. */
function legacyStatus(view: RequestView): TaskStatusV1 {
  if (view.status === "completed" || view.status === "cancelled") return view.status;
  return isFinalStatus(view.status) ? "failed" : "working";
}

export function legacyTask({ view, changedAt }: RequestRecord): TaskV1 {
  return {
    taskId: view.request_id,
    status: legacyStatus(view),
    statusMessage: statusMessage(view),
    createdAt: view.created_at,
    lastUpdatedAt: changedAt.toISOString(),
    ttl: TASK_TTL_MS,
    pollInterval: POLL_INTERVAL_MS,
  };
}

function encodeCursor(position: RequestPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt.toISOString(), position.id])).toString("base64url");
}

function decodeCursor(cursor: string): RequestPosition {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, "base64url").toString()) as [string, string];
    const createdAt = new Date(at);
    if (typeof id === "string" && !Number.isNaN(createdAt.getTime())) return { createdAt, id };
  } catch {
    // an unreadable cursor is refused below
  }
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, "Invalid cursor");
}

function registerLegacyTasks(server: McpServer, agent: AgentContext) {
  server.server.registerCapabilities({ tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } });
  server.server.setRequestHandler(
    "tasks/get",
    { params: GetTaskRequestV1Schema.shape.params },
    async ({ taskId }): Promise<GetTaskResultV1> => legacyTask(await taskRecord(agent, taskId)),
  );
  server.server.setRequestHandler("tasks/result", { params: GetTaskResultRequestV1Schema.shape.params }, async ({ taskId }, ctx) => {
    const record = await taskRecord(agent, taskId);
    let view = record.view;
    if (!isFinalStatus(view.status)) {
      view = await waitForDecision(agent, taskId, RESULT_WAIT_SECONDS, { signal: hangUpSignal(ctx) });
      if (!isFinalStatus(view.status))
        throw new ProtocolError(ProtocolErrorCode.InternalError, `Task ${taskId} is still working; ask again`);
    }
    const result = toolResultOf(view);
    return { ...result, _meta: { [RELATED_TASK_META_KEY]: { taskId } } };
  });
  server.server.setRequestHandler(
    "tasks/list",
    { params: ListTasksRequestV1Schema.shape.params },
    async (params): Promise<ListTasksResultV1> => {
      const page = await pageRequests(agent, params?.cursor === undefined ? undefined : decodeCursor(params.cursor), PAGE_SIZE);
      return { tasks: page.records.map(legacyTask), ...(page.next && { nextCursor: encodeCursor(page.next) }) };
    },
  );
  server.server.setRequestHandler(
    "tasks/cancel",
    { params: CancelTaskRequestV1Schema.shape.params },
    async ({ taskId }): Promise<CancelTaskResultV1> => {
      // 2025-11-25: cancelling a task already in a terminal status is invalid params; so is cancelling one the
      // person approved, which is being signed and cannot be called back.
      const refused = (status: string) =>
        new ProtocolError(ProtocolErrorCode.InvalidParams, `Task ${taskId} is ${status}: it cannot be cancelled`);
      const { view } = await taskRecord(agent, taskId);
      if (view.status !== "pending") throw refused(isFinalStatus(view.status) ? `already ${legacyStatus(view)}` : `${view.status}`);
      try {
        await cancelRequest(agent, taskId);
      } catch (error) {
        if (error instanceof RequestError) throw refused("decided meanwhile");
        throw error;
      }
      return legacyTask(await taskRecord(agent, taskId));
    },
  );
}

// ---------- 2026-07-28 tasks extension (SEP-2663) ----------

/** Whether this 2026-07-28 request's client declared the tasks extension in its per-request capabilities. */
export function declaresTasks(clientCapabilities: unknown): boolean {
  return hasTaskClientCapabilityV2({ _meta: { [CLIENT_CAPABILITIES_META_KEY]: clientCapabilities } });
}

function modernTaskBase({ view, changedAt }: RequestRecord) {
  return {
    taskId: view.request_id,
    statusMessage: statusMessage(view),
    createdAt: view.created_at,
    lastUpdatedAt: changedAt.toISOString(),
    ttlMs: TASK_TTL_MS,
    pollIntervalMs: POLL_INTERVAL_MS,
  };
}

/** The flat answer to a tools/call that became a task. */
export function createdTask(record: RequestRecord): CreateTaskResultV2 {
  return { resultType: "task", status: "working", ...modernTaskBase(record) };
}

/**
 * A rejected, expired or failed request is the tool's outcome, not a protocol failure: the task completed with
 * that tool error inlined. `failed` (with an error) is left for protocol errors, which a request never has.
 */
function detailedTask(record: RequestRecord): DetailedTaskV2 {
  const base = modernTaskBase(record);
  const { status } = record.view;
  if (status === "cancelled") return { ...base, status: "cancelled" };
  if (!isFinalStatus(status)) return { ...base, status: "working" };
  return { ...base, status: "completed", result: { resultType: "complete", ...toolResultOf(record.view) } as never };
}

function requireTasksExtension(ctx: ServerContext) {
  const capabilities = ctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY as keyof typeof ctx.mcpReq.envelope];
  if (!declaresTasks(capabilities)) {
    throw new MissingRequiredClientCapabilityError(
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID_V2]: {} } } },
      `tasks/* needs the ${TASKS_EXTENSION_ID_V2} extension in the request's client capabilities`,
    );
  }
}

function registerModernTasks(server: McpServer, agent: AgentContext) {
  server.server.registerCapabilities({ extensions: { [TASKS_EXTENSION_ID_V2]: {} } });
  server.server.setRequestHandler("tasks/get", { params: GetTaskRequestV2Schema.shape.params }, async ({ taskId }, ctx) => {
    requireTasksExtension(ctx);
    return detailedTask(await taskRecord(agent, taskId));
  });
  server.server.setRequestHandler(
    "tasks/cancel",
    { params: CancelTaskRequestV2Schema.shape.params },
    async ({ taskId }, ctx): Promise<CancelTaskResultV2> => {
      requireTasksExtension(ctx);
      // An acknowledgement: a task already ended stays as it ended, and an approved request is already being signed.
      await cancelPending(agent, (await taskRecord(agent, taskId)).view);
      return { resultType: "complete" };
    },
  );
  // A request's task never asks for input (the approval happens on the approval page), so no update is expected;
  // only its id is read, so that a client without the extension hears -32021 whatever the responses it sent.
  server.server.setRequestHandler("tasks/update", { params: GetTaskRequestV2Schema.shape.params }, async ({ taskId }, ctx) => {
    requireTasksExtension(ctx);
    await taskRecord(agent, taskId);
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Task ${taskId} asks for no input`);
  });
}

// ---------- both ----------

/** The task of this grant with that id; any other id is unknown (-32602), whoever's request it may be. */
async function taskRecord(agent: AgentContext, taskId: string): Promise<RequestRecord> {
  try {
    return await getRequestRecord(agent, taskId);
  } catch (error) {
    if (error instanceof NotFoundError) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown task ${taskId}`);
    throw error;
  }
}

/** cancel_request for a pending request; one decided meanwhile (or approved, so being signed) is left as it is. */
async function cancelPending(agent: AgentContext, view: RequestView): Promise<void> {
  if (view.status !== "pending") return;
  try {
    await cancelRequest(agent, view.request_id);
  } catch (error) {
    if (!(error instanceof RequestError)) throw error;
  }
}

/** The tasks/* methods of the era this server answers, and the capability that advertises them. */
export function registerTasks(server: McpServer, agent: AgentContext, era: ProtocolEra): void {
  if (era === "legacy") registerLegacyTasks(server, agent);
  else registerModernTasks(server, agent);
}
