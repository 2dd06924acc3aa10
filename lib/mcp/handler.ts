import {
  createMcpHandler,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type McpHttpHandler,
} from "@modelcontextprotocol/server";
import { config } from "@/lib/config";
import { resolveBearer } from "@/lib/oauth/bearer";
import { DPOP_ALGORITHMS } from "@/lib/oauth/dpop-proof";
import { InsufficientScopeError, InvalidDpopProofError, InvalidTokenError, oauthErrorResponse } from "@/lib/oauth/errors";
import { protectedResourceMetadataUrl } from "@/lib/oauth/metadata";
import { isDatabaseUnavailable, RateLimitedError, UNAVAILABLE_RETRY_AFTER_SECONDS } from "@/lib/http/errors";
import { type JsonBodyError, parseJsonBody } from "@/lib/http/input-limits";
import { json, PUBLIC_CORS, readBody, withHeaders } from "@/lib/http/respond";
import { clientIp } from "@/lib/limits/client-ip";
import { spendRateLimit } from "@/lib/limits/rate-limit";
import { agentOf, authInfoOf, calledToolsOf, toolsCalledBy } from "./caller";
import { answerPastTheSdk } from "./read-calls";
import { refusedRequest } from "./request-guard";
import { createMcpServer } from "./server";
import { serveAsTask } from "./task-calls";

/** Scopes the 401 challenge suggests, so MCP clients can ask to stay connected (docs/product.md §5). */
const CHALLENGE_SCOPE = "mcp offline_access";

function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, "")}"`;
}

type Refusal = InvalidTokenError | InvalidDpopProofError | InsufficientScopeError;

/**
 * The RFC 6750 / RFC 9728 challenge for a missing or unusable bearer (401), or for one without the scope
 * /mcp needs (403, RFC 6750 §3.1: the scope named is the one to re-authorize with). A refused DPoP-bound token or
 * proof is described in a DPoP challenge (RFC 9449 §7.1) after the Bearer one, which still names the metadata.
 */
function challenge(error: Refusal): string {
  const metadata = `resource_metadata=${quoted(protectedResourceMetadataUrl(config()))}`;
  const described = [`error="${error.code}"`, `error_description=${quoted(error.message)}`];
  if (error instanceof InsufficientScopeError) return `Bearer ${[...described, `scope=${quoted(error.scope)}`, metadata].join(", ")}`;
  const parts = [metadata, `scope=${quoted(CHALLENGE_SCOPE)}`];
  if (error instanceof InvalidDpopProofError || error.scheme === "DPoP")
    return `Bearer ${parts.join(", ")}, DPoP ${[...described, `algs="${DPOP_ALGORITHMS.join(" ")}"`].join(", ")}`;
  return `Bearer ${(error.tokenPresented ? [...described, ...parts] : parts).join(", ")}`;
}

/**
 * POST /mcp (and the other methods): origin and host check, rate limits (by address before the bearer check, by
 * grant after it), method, body limits (size, JSON depth, batch size); then a 2025-era
 * request (no per-request _meta envelope) is served statelessly as before, and a 2026-07-28 one by the SDK's
 * per-request handler. Both build the same server around the caller's grant. A plain read call or tools/list of either
 * era is answered past the SDK, with the bytes it would answer (lib/mcp/read-calls.ts, decision 0033).
 */
export function handleMcpRequest(request: Request): Promise<Response> {
  return serveMcp(request, true);
}

/** /mcp with every request served by the SDK: what the answers past it are held to (e2e/mcp/read-calls.test.ts). */
export function handleMcpRequestBySdk(request: Request): Promise<Response> {
  return serveMcp(request, false);
}

async function serveMcp(request: Request, pastTheSdk: boolean): Promise<Response> {
  const refused = refusedRequest(request.headers);
  if (refused) return json(jsonRpcError(-32000, refused), { status: 403, headers: PUBLIC_CORS });
  let agent;
  try {
    await spendRateLimit("mcp", { ip: clientIp(request.headers) });
    agent = await resolveBearer(request.headers.get("authorization"), { proof: request.headers.get("dpop"), method: request.method });
    await spendRateLimit("mcp", { client: agent.grantId });
  } catch (error) {
    if (error instanceof RateLimitedError) {
      return json(jsonRpcError(-32000, error.message), { status: 429, headers: { ...PUBLIC_CORS, ...error.headers } });
    }
    if (isDatabaseUnavailable(error)) {
      return json(jsonRpcError(-32000, "Service unavailable: the database cannot be reached; retry in a few seconds"), {
        status: 503,
        headers: { ...PUBLIC_CORS, "Retry-After": String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
      });
    }
    const challenged =
      error instanceof InvalidTokenError || error instanceof InvalidDpopProofError || error instanceof InsufficientScopeError;
    return oauthErrorResponse(error, challenged ? { "WWW-Authenticate": challenge(error) } : {});
  }
  if (request.method !== "POST") {
    return json(
      { error: "method_not_allowed", error_description: "This MCP endpoint is stateless: use POST" },
      { status: 405, headers: { ...PUBLIC_CORS, Allow: "POST" } },
    );
  }
  const body = await readBody(request, MCP_BODY_LIMIT);
  if (body === null)
    return json(jsonRpcError(-32600, `The request body may be at most ${MCP_BODY_LIMIT} bytes`), { status: 413, headers: PUBLIC_CORS });
  let parsed: unknown;
  try {
    parsed = parseJsonBody(body);
  } catch (error) {
    return json(jsonRpcError(-32700, `Parse error: ${(error as JsonBodyError).message}`), { status: 400, headers: PUBLIC_CORS });
  }
  if (Array.isArray(parsed) && parsed.length > MAX_BATCH)
    return json(jsonRpcError(-32600, `A batch may hold at most ${MAX_BATCH} messages`), { status: 400, headers: PUBLIC_CORS });
  const legacy = await isLegacyRequest(request, parsed);
  const read = pastTheSdk ? await answerPastTheSdk(request, parsed, agent, legacy) : undefined;
  if (read) return read;
  // The token after its scheme, Bearer or DPoP.
  const authInfo = authInfoOf(agent, request.headers.get("authorization")!.trim().replace(/^\S+ /, ""), toolsCalledBy(parsed));
  const serve = (message: unknown, info: AuthInfo) =>
    legacy ? serveLegacy(request, message, info) : modernHandler().fetch(request, { authInfo: info, parsedBody: message });
  const response = (await serveAsTask(parsed, legacy, authInfo, serve)) ?? (await serve(parsed, authInfo));
  return withHeaders(response, PUBLIC_CORS);
}

let modern: McpHttpHandler | undefined;

/**
 * 2026-07-28: stateless by design; it answers JSON and streams only when a tool sends a notification
 * (progress) before its result. 2025-era requests never reach it (serveLegacy).
 */
function modernHandler(): McpHttpHandler {
  modern ??= createMcpHandler(({ authInfo }) => createMcpServer(agentOf(authInfo), "modern", calledToolsOf(authInfo)), {
    legacy: "reject",
    maxRequestBodySize: MCP_BODY_LIMIT,
    onerror: (error) => console.error(`mcp: ${error.message}`),
  });
  return modern;
}

/**
 * 2025-11-25 and earlier, as before the SDK's v2: a fresh stateless transport per request, JSON unless the
 * call asked for progress (then an event stream, so notifications flow while it waits for the person). The
 * SDK's own stateless fallback would always stream.
 */
async function serveLegacy(request: Request, parsed: unknown, authInfo: AuthInfo): Promise<Response> {
  const streaming = wantsProgress(parsed);
  const server = createMcpServer(agentOf(authInfo), "legacy", calledToolsOf(authInfo));
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !streaming });
  await server.connect(transport);
  // A JSON answer is complete when it returns, and the server and transport are garbage once it is sent; closing
  // them would only build the SDK's "connection closed" error (a stack trace per call on the hot path).
  return transport.handleRequest(request, { parsedBody: parsed, authInfo });
}

const MCP_BODY_LIMIT = 1024 * 1024;
/** 2025-03-26 clients may batch; no client needs more in one POST, and each message is a server's work. */
const MAX_BATCH = 20;

function jsonRpcError(code: number, message: string) {
  return { jsonrpc: "2.0", id: null, error: { code, message } };
}

function wantsProgress(message: unknown): boolean {
  const messages = Array.isArray(message) ? message : [message];
  return messages.some((entry) => {
    const params = (entry as { method?: string; params?: { _meta?: { progressToken?: unknown } } } | null)?.params;
    return (entry as { method?: string })?.method === "tools/call" && params?._meta?.progressToken !== undefined;
  });
}
