// A sensitive tool called as a task (docs/decisions/0010): the call runs through the SDK like any other —
// same input validation, request creation, policy, audit event and tool errors — marked so the tool answers
// with the request at once (no waiting, no URL elicitation); its answer is then shaped into the era's
// CreateTaskResult here, after the SDK, because the SDK validates every tools/call result as a CallToolResult
// (the 2025-era codec refuses a `task` body; a tool with an output schema must return structured content).
import { CLIENT_CAPABILITIES_META_KEY, isJsonContentType, type AuthInfo, type ServerContext } from "@modelcontextprotocol/server";
import type { CreateTaskResultV1 } from "@modelcontextprotocol/ext-tasks/core/v1";
import { TOOLS, type ToolName } from "@/contract";
import { createdTask, declaresTasks, isRequestView, legacyTask } from "./tasks";

type ToolCall = {
  jsonrpc: "2.0";
  id: string | number;
  method: "tools/call";
  params: { name?: unknown; task?: unknown; _meta?: Record<string, unknown> };
};

function toolCallIn(message: unknown): ToolCall | undefined {
  const call = message as ToolCall | null;
  return call?.method === "tools/call" && typeof call.params === "object" && call.params !== null ? call : undefined;
}

function isSensitive(name: unknown): boolean {
  return typeof name === "string" && Object.hasOwn(TOOLS, name) && TOOLS[name as ToolName].sensitive;
}

/** The marker the tool reads (isTaskCall): it rides the per-request auth info, as the caller's grant does. */
function markedAsTask(authInfo: AuthInfo): AuthInfo {
  return { ...authInfo, extra: { ...authInfo.extra, taskCall: true } };
}

/** Whether this tools/call is to be answered as a task: the sensitive tool then returns its request at once. */
export function isTaskCall(ctx: ServerContext): boolean {
  return ctx.http?.authInfo?.extra?.taskCall === true;
}

function jsonRpc(body: unknown, response?: Response): Response {
  const headers = new Headers(response?.headers ?? { "Content-Type": "application/json" });
  headers.delete("Content-Length");
  return new Response(JSON.stringify(body), { status: response?.status ?? 200, headers });
}

/**
 * The tool's answer as a task: a created request becomes its task (2025-11-25: `{task}`; 2026-07-28: the flat
 * CreateTaskResult). A tool error (a policy refusal, an ungranted credential) created no request, so no task:
 * it is answered as it came, which both eras' task requesters accept as an immediate result.
 */
async function answeredAsTask(response: Response, era: "legacy" | "modern"): Promise<Response> {
  if (!isJsonContentType(response.headers.get("content-type"))) return response;
  const body = (await response.json()) as { result?: { isError?: boolean; structuredContent?: unknown; _meta?: Record<string, unknown> } };
  const result = body.result;
  if (!result || result.isError || !isRequestView(result.structuredContent)) return jsonRpc(body, response);
  const view = result.structuredContent;
  const record = { view, changedAt: new Date(view.created_at) };
  const task =
    era === "legacy"
      ? ({ task: legacyTask(record) } satisfies CreateTaskResultV1)
      : { ...createdTask(record), ...(result._meta && { _meta: result._meta }) };
  return jsonRpc({ ...body, result: task }, response);
}

/**
 * Serves a tools/call that asks to be a task — 2025-11-25: `params.task` (one message: that era has no
 * batches); 2026-07-28: a sensitive tool called by a client that declared the tasks extension — or answers
 * undefined for every other message, which `serve` then serves as usual. 2025-11-25: a tool without task
 * support called with `params.task` is refused with -32601, as that spec asks.
 */
export async function serveAsTask(
  message: unknown,
  legacy: boolean,
  authInfo: AuthInfo,
  serve: (message: unknown, authInfo: AuthInfo) => Promise<Response>,
): Promise<Response | undefined> {
  const call = toolCallIn(message);
  if (!call) return undefined;
  if (legacy) {
    if (call.params.task === undefined) return undefined;
    if (!isSensitive(call.params.name)) {
      const error = { code: -32601, message: `Tool ${String(call.params.name)} does not support task-augmented calls` };
      return jsonRpc({ jsonrpc: "2.0", id: call.id, error });
    }
    // The call returns at once, so progress has nothing to report: answered as JSON.
    const { task: _task, ...params } = call.params;
    const { progressToken: _progress, ...meta } = params._meta ?? {};
    const plain = { ...call, params: { ...params, ...(params._meta && { _meta: meta }) } };
    return answeredAsTask(await serve(plain, markedAsTask(authInfo)), "legacy");
  }
  if (!isSensitive(call.params.name) || !declaresTasks(call.params._meta?.[CLIENT_CAPABILITIES_META_KEY])) return undefined;
  return answeredAsTask(await serve(call, markedAsTask(authInfo)), "modern");
}
