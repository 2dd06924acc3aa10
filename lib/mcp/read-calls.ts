// A plain read call answered past the SDK (decision 0033): the same tool run, the same bytes on the wire, without the
// SDK's per-request server and transport or its zod checks of the whole message and result.
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  isJsonContentType,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolResult,
} from "@modelcontextprotocol/server";
import type { AgentContext } from "@/lib/wallet/agent-context";
import { json, jsonText, PUBLIC_CORS } from "@/lib/http/respond";
import { TOOLS } from "@/contract";
import { SERVER_INFO, toolList } from "./server";
import { isPlainRead, PLAIN_READS, runTool, type PlainRead, type ToolInput } from "./tool-run";

type PlainReadCall = { id: string | number; name: PlainRead; arguments: Record<string, unknown> };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function hasOnly(value: Record<string, unknown>, keys: ReadonlySet<string>): boolean {
  return Object.keys(value).every((key) => keys.has(key));
}

const MESSAGE_KEYS: ReadonlySet<string> = new Set(["jsonrpc", "id", "method", "params"]);
const PARAMS_KEYS: ReadonlySet<string> = new Set(["name", "arguments"]);
const MODERN_PARAMS_KEYS: ReadonlySet<string> = new Set(["name", "arguments", "_meta"]);
const META_ONLY: ReadonlySet<string> = new Set(["_meta"]);
const NO_KEYS: ReadonlySet<string> = new Set();
const ENVELOPE_KEYS: ReadonlySet<string> = new Set([PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY]);
const CLIENT_INFO_KEYS: ReadonlySet<string> = new Set(["name", "version"]);
const MODERN = "2026-07-28";

/**
 * The one message's call, when it is a JSON-RPC request (an id: no batch, no notification) of a plain read tool whose
 * params hold only the given members and whose arguments are an object or absent.
 */
function readCallOf(message: unknown, paramsKeys: ReadonlySet<string>): (PlainReadCall & { params: Record<string, unknown> }) | undefined {
  const request = plainRequest(message, "tools/call");
  if (!request) return undefined;
  const { id, params } = request;
  if (!isRecord(params) || !hasOnly(params, paramsKeys) || !isPlainRead(params.name)) return undefined;
  if (params.arguments !== undefined && !isRecord(params.arguments)) return undefined;
  return { id, name: params.name, arguments: params.arguments ?? {}, params };
}

/** The message's id and params, when it is one JSON-RPC 2.0 request of `method` with an id the SDK takes, and no more. */
function plainRequest(message: unknown, method: string): { id: string | number; params: unknown } | undefined {
  if (!isRecord(message) || !hasOnly(message, MESSAGE_KEYS)) return undefined;
  if (message.jsonrpc !== "2.0" || message.method !== method) return undefined;
  const { id, params } = message;
  if (typeof id !== "string" && !Number.isSafeInteger(id)) return undefined;
  return { id: id as string | number, params };
}

/** Whether the SDK's stateless transport would take the request as it is and answer it as JSON. */
function takesJson(headers: Headers): boolean {
  const accept = headers.get("accept");
  return !!accept?.includes("application/json") && accept.includes("text/event-stream") && isJsonContentType(headers.get("content-type"));
}

/**
 * The call, when the request is one the SDK's stateless transport serves as JSON by handing its one message, as it
 * came, to a plain read tool: it accepts JSON and event streams, sends JSON, names a protocol version the SDK supports
 * (or none), and is one tools/call whose params are the tool's name and its arguments only (no _meta: no progress
 * token, no task, no approval state). Anything else goes to the SDK, which answers it (and refuses what it refuses)
 * as it always has.
 */
function plainReadCall(headers: Headers, message: unknown): PlainReadCall | undefined {
  return takesLegacyJson(headers) ? readCallOf(message, PARAMS_KEYS) : undefined;
}

/** A 2025-era request the SDK's stateless transport answers as JSON: it takes JSON, and names a version it supports or none. */
function takesLegacyJson(headers: Headers): boolean {
  const version = headers.get("mcp-protocol-version");
  return takesJson(headers) && (version === null || SUPPORTED_PROTOCOL_VERSIONS.includes(version));
}

/** The capabilities a 2026-07-28 client declares (the SDK's schema of them; it drops any other member). */
const CAPABILITY_KEYS: ReadonlySet<string> = new Set(["experimental", "sampling", "elicitation", "roots", "extensions"]);

/** No capability at all, or ones declared bare ({}): what a 2026-07-28 client that asks for nothing more sends. */
function plainCapabilities(value: unknown): boolean {
  return (
    isRecord(value) &&
    hasOnly(value, CAPABILITY_KEYS) &&
    Object.values(value).every((member) => isRecord(member) && Object.keys(member).length === 0)
  );
}

/** A client's name and version, both strings, and nothing else. */
function plainClientInfo(value: unknown): boolean {
  return isRecord(value) && hasOnly(value, CLIENT_INFO_KEYS) && typeof value.name === "string" && typeof value.version === "string";
}

/**
 * The 2026-07-28 call the SDK's createMcpHandler serves as JSON by handing it to a plain read tool, with nothing of
 * its envelope in play: the standard headers exactly as the body names them (MCP-Protocol-Version 2026-07-28,
 * Mcp-Method tools/call, Mcp-Name the tool's name as it is), and params of the name, the arguments and a _meta of
 * the envelope alone: protocol version 2026-07-28, capabilities none or bare, and a client's name and version (or
 * none). No progress token, no log level, no task, no approval state, no trace context. Anything else, the SDK's.
 */
function modernReadCall(headers: Headers, message: unknown): PlainReadCall | undefined {
  if (!takesJson(headers)) return undefined;
  if (headers.get("mcp-protocol-version") !== MODERN || headers.get("mcp-method") !== "tools/call") return undefined;
  const call = readCallOf(message, MODERN_PARAMS_KEYS);
  if (!call || headers.get("mcp-name") !== call.name) return undefined;
  return plainEnvelope(call.params._meta) ? call : undefined;
}

/** A 2026-07-28 _meta of the envelope alone: protocol version 2026-07-28, capabilities none or bare, a plain clientInfo. */
function plainEnvelope(meta: unknown): boolean {
  if (!isRecord(meta) || !hasOnly(meta, ENVELOPE_KEYS) || meta[PROTOCOL_VERSION_META_KEY] !== MODERN) return false;
  if (!plainCapabilities(meta[CLIENT_CAPABILITIES_META_KEY])) return false;
  const info = meta[CLIENT_INFO_META_KEY];
  return info === undefined || plainClientInfo(info);
}

/** The SDK's tool error result, as McpServer makes it of a failure outside the tool's own handling. */
function toolError(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

/** The SDK's words for a schema's issues (its formatIssue): each issue's path, then its message. */
function issuesOf(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  return issues.map((issue) => (issue.path.length ? `${issue.path.map(String).join(".")}: ${issue.message}` : issue.message)).join(", ");
}

/** The tool run as McpServer runs it: the tool, then the structured content checked against the output schema. */
async function readResult<N extends PlainRead>(agent: AgentContext, name: N, input: ToolInput<N>): Promise<CallToolResult> {
  try {
    const read = PLAIN_READS[name] as (agent: AgentContext, input: ToolInput<N>) => Promise<Record<string, unknown>>;
    // a read's outcome is its view: never a prompt for the person
    const result = (await runTool(agent, name, input, () => read(agent, input))) as CallToolResult;
    if (result.isError) return result;
    const checked = TOOLS[name].output.safeParse(result.structuredContent);
    if (checked.success) return result;
    return toolError(`Output validation error: Invalid structured content for tool ${name}: ${issuesOf(checked.error.issues)}`);
  } catch (error) {
    return toolError(error instanceof Error ? error.message : String(error));
  }
}

/**
 * A tools/list the SDK would answer with the one list of every tool, for any caller: 2025-era with params none or
 * empty (no cursor); 2026-07-28 with params of the plain envelope alone and the headers naming tools/list, no Mcp-Name.
 */
function plainListId(headers: Headers, message: unknown, legacy: boolean): string | number | undefined {
  const request = plainRequest(message, "tools/list");
  if (!request) return undefined;
  const { id, params } = request;
  if (legacy) return takesLegacyJson(headers) && (params === undefined || (isRecord(params) && hasOnly(params, NO_KEYS))) ? id : undefined;
  if (!takesJson(headers) || headers.get("mcp-protocol-version") !== MODERN || headers.get("mcp-method") !== "tools/list") return undefined;
  if (headers.has("mcp-name")) return undefined;
  return isRecord(params) && hasOnly(params, META_ONLY) && plainEnvelope(params._meta) ? id : undefined;
}

/** The SDK's answer to a tools/list of each era up to its id: made once, as the list never changes while the app runs. */
const listAnswerStart = { legacy: "", modern: "" };

function listAnswerOf(legacy: boolean, id: string | number): Response {
  const era = legacy ? "legacy" : "modern";
  if (!listAnswerStart[era]) {
    // 2026-07-28 has no tasks: the SDK's encoder leaves each tool's execution (its task support) out, and stamps the
    // result with the cache hints it gives a list by default (SEP-2549: not to be kept, private) and the server.
    const tools = legacy ? toolList() : toolList().map(({ execution: _tasks, ...tool }) => tool);
    const stamps = { resultType: "complete", ttlMs: 0, cacheScope: "private", _meta: { [SERVER_INFO_META_KEY]: SERVER_INFO } };
    const result = legacy ? { tools } : { tools, ...stamps };
    listAnswerStart[era] = `{"result":${JSON.stringify(result)},"jsonrpc":"2.0","id":`;
  }
  return jsonText(`${listAnswerStart[era]}${JSON.stringify(id)}}`, { status: 200, headers: PUBLIC_CORS });
}

/**
 * The answer to a plain read call or a plain tools/list, byte for byte the SDK's, or undefined for the SDK to serve
 * the request (e2e/mcp/read-calls.test.ts). tools/list costs the SDK a server and a transport per request and the
 * whole list's objects to serialize, which its JSON Schemas make the largest answer /mcp gives (docs/performance.md).
 */
export async function answerPastTheSdk(
  request: Request,
  message: unknown,
  agent: AgentContext,
  legacy: boolean,
): Promise<Response | undefined> {
  const listId = plainListId(request.headers, message, legacy);
  if (listId !== undefined) return listAnswerOf(legacy, listId);
  return answerPlainRead(request, message, agent, legacy);
}

/**
 * The answer to a plain read call, byte for byte the SDK's (status, headers, body; e2e/mcp/read-calls.test.ts), or
 * undefined for the SDK to serve the request: anything that is not one, and a call whose arguments the tool's input
 * schema refuses (the SDK words that refusal). The result needs no second check as a CallToolResult: runTool and
 * toolError build it of text content and an object's structured content only. A 2026-07-28 result also carries what
 * the SDK's encoder stamps on it: resultType "complete" and the server's identity in _meta.
 */
async function answerPlainRead(request: Request, message: unknown, agent: AgentContext, legacy: boolean): Promise<Response | undefined> {
  const call = legacy ? plainReadCall(request.headers, message) : modernReadCall(request.headers, message);
  if (!call) return undefined;
  const input = TOOLS[call.name].input.safeParse(call.arguments);
  if (!input.success) return undefined;
  const read = await readResult(agent, call.name, input.data as ToolInput<PlainRead>);
  const result = legacy ? read : { ...read, resultType: "complete", _meta: { [SERVER_INFO_META_KEY]: SERVER_INFO } };
  return json({ result, jsonrpc: "2.0", id: call.id }, { status: 200, headers: PUBLIC_CORS });
}
