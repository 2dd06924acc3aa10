import { ZodError } from "zod";
import { ANSWER_TEXT } from "./node-bridge";
import { HttpError, invalidInput, isDatabaseUnavailable, RateLimitedError, ServiceUnavailableError, UnexpectedError } from "./errors";

export const NO_STORE = { "Cache-Control": "no-store", Pragma: "no-cache" } as const;

export function json(body: unknown, init: ResponseInit = {}): Response {
  const headers = new Headers(init.headers);
  headers.set("Content-Type", "application/json");
  const text = JSON.stringify(body);
  // Kept for the node bridge to write as it is.
  return Object.assign(new Response(text, { ...init, headers }), { [ANSWER_TEXT]: text });
}

/**
 * The one place where errors become responses. Deliberate errors keep their
 * protocol format (a spent rate limit as `limited` makes it); an unreachable database is `unavailable` (503, Retry-After);
 * anything else is logged (name and message only) and answered with `unexpected`,
 * the route's protocol's own 500, whose body says nothing internal.
 */
export function errorResponse(
  error: unknown,
  options: {
    headers?: HeadersInit;
    unexpected?: HttpError;
    unavailable?: HttpError;
    limited?: (error: RateLimitedError) => HttpError;
  } = {},
): Response {
  let known = error instanceof HttpError ? error : error instanceof ZodError ? invalidInput(error) : null;
  if (known instanceof RateLimitedError && options.limited) known = options.limited(known);
  if (!known && isDatabaseUnavailable(error)) {
    console.error("database unavailable:", error instanceof Error ? error.message.split("\n")[0] : "unknown");
    known = options.unavailable ?? new ServiceUnavailableError();
  }
  if (!known) {
    console.error("unexpected error:", error instanceof Error ? `${error.name}: ${error.message}` : "non-error thrown");
    known = options.unexpected ?? new UnexpectedError();
  }
  const headers = { ...NO_STORE, ...known.headers, ...Object.fromEntries(new Headers(options.headers)) };
  return json(known.toResponseObject(), { status: known.status, headers });
}

/**
 * Open CORS for the public surface that browser-based MCP clients call. Mcp-Method and Mcp-Name are the
 * standard headers 2026-07-28 clients send on every request.
 */
export const PUBLIC_CORS = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
  "Access-Control-Allow-Headers": "Authorization, Content-Type, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id, Last-Event-ID",
  "Access-Control-Expose-Headers": "WWW-Authenticate, Mcp-Session-Id, Mcp-Protocol-Version",
  "Access-Control-Max-Age": "86400",
} as const;

export function withHeaders(response: Response, headers: Record<string, string>): Response {
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}

/** The answer to a CORS preflight on a public endpoint. */
export function preflight(): Response {
  return new Response(null, { status: 204, headers: PUBLIC_CORS });
}

/**
 * Reads a request body as text, refusing more than `limit` bytes. A body of a declared length within the limit is
 * read whole (Node's parser holds the client to that length); one without is counted as it streams in.
 */
export async function readBody(request: Request, limit: number): Promise<string | null> {
  const length = request.headers.get("content-length");
  if (length !== null) return Number(length) > limit ? null : request.text();
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}
