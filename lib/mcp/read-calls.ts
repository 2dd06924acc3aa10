// A plain 2025-era read call answered past the SDK (decision 0033): the same tool run, the same bytes on the wire,
// without the SDK's per-request server and transport or its zod checks of the whole message and result.
import { isJsonContentType, SUPPORTED_PROTOCOL_VERSIONS, type CallToolResult } from "@modelcontextprotocol/server";
import type { AgentContext } from "@/lib/wallet/agent-context";
import { json, PUBLIC_CORS } from "@/lib/http/respond";
import { TOOLS } from "@/contract";
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

/**
 * The call, when the request is one the SDK's stateless transport serves as JSON by handing its one message, as it
 * came, to a plain read tool: it accepts JSON and event streams, sends JSON, names a protocol version the SDK supports
 * (or none), and is one tools/call with an id (no batch, no notification) whose params are the tool's name and its
 * arguments only (no _meta: no progress token, no task, no approval state). Anything else goes to the SDK, which
 * answers it (and refuses what it refuses) as it always has.
 */
function plainReadCall(headers: Headers, message: unknown): PlainReadCall | undefined {
  const accept = headers.get("accept");
  if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) return undefined;
  if (!isJsonContentType(headers.get("content-type"))) return undefined;
  const version = headers.get("mcp-protocol-version");
  if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined;
  if (!isRecord(message) || !hasOnly(message, MESSAGE_KEYS)) return undefined;
  if (message.jsonrpc !== "2.0" || message.method !== "tools/call") return undefined;
  const { id, params } = message;
  if (typeof id !== "string" && !Number.isSafeInteger(id)) return undefined;
  if (!isRecord(params) || !hasOnly(params, PARAMS_KEYS) || !isPlainRead(params.name)) return undefined;
  if (params.arguments !== undefined && !isRecord(params.arguments)) return undefined;
  return { id: id as string | number, name: params.name, arguments: params.arguments ?? {} };
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
 * The answer to a plain read call, byte for byte the SDK's (status, headers, body; e2e/mcp/read-calls.test.ts), or
 * undefined for the SDK to serve the request: anything that is not one, and a call whose arguments the tool's input
 * schema refuses (the SDK words that refusal). The result needs no second check as a CallToolResult: runTool and
 * toolError build it of text content and an object's structured content only.
 */
export async function answerPlainRead(request: Request, message: unknown, agent: AgentContext): Promise<Response | undefined> {
  const call = plainReadCall(request.headers, message);
  if (!call) return undefined;
  const input = TOOLS[call.name].input.safeParse(call.arguments);
  if (!input.success) return undefined;
  const result = await readResult(agent, call.name, input.data as ToolInput<PlainRead>);
  return json({ result, jsonrpc: "2.0", id: call.id }, { status: 200, headers: PUBLIC_CORS });
}
