import { ZodError } from "zod";
import { ANSWER_TEXT } from "./node-bridge";
import { HttpError, invalidInput, isDatabaseUnavailable, RateLimitedError, ServiceUnavailableError, UnexpectedError } from "./errors";

export const NO_STORE = { "Cache-Control": "no-store", Pragma: "no-cache" } as const;

/**
 * A JSON answer whose body becomes a web stream only when something reads it: undici makes one for any body it is
 * given, which costs more than the rest of the answer (about 20 µs on Node 20), and the node bridge writes the text as
 * it is (ANSWER_TEXT). Read any way, it is the Response undici makes of the same text, status and headers.
 */
class JsonAnswer extends Response {
  readonly #text: string;
  #standard: Response | undefined;

  constructor(text: string, init: ResponseInit) {
    super(null, init);
    this.#text = text;
  }

  #withBody(): Response {
    this.#standard ??= new Response(this.#text, { status: this.status, statusText: this.statusText, headers: this.headers });
    return this.#standard;
  }

  /** The text, while nothing has read the body another way. */
  get [ANSWER_TEXT](): string | undefined {
    return this.#standard ? undefined : this.#text;
  }

  override get body(): ReadableStream<Uint8Array<ArrayBuffer>> {
    return this.#withBody().body!;
  }

  override get bodyUsed(): boolean {
    return this.#standard?.bodyUsed ?? false;
  }

  override text(): Promise<string> {
    return this.#withBody().text();
  }

  override json(): Promise<unknown> {
    return this.#withBody().json();
  }

  override arrayBuffer(): Promise<ArrayBuffer> {
    return this.#withBody().arrayBuffer();
  }

  override bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return this.#withBody().bytes();
  }

  override blob(): Promise<Blob> {
    return this.#withBody().blob();
  }

  override formData(): Promise<FormData> {
    return this.#withBody().formData();
  }

  override clone(): Response {
    return this.#withBody().clone();
  }
}

export function json(body: unknown, init: ResponseInit = {}): Response {
  return jsonText(JSON.stringify(body), init);
}

/** A JSON answer of text already serialized. */
export function jsonText(text: string, init: ResponseInit = {}): Response {
  const headers = new Headers(init.headers);
  headers.set("Content-Type", "application/json");
  return new JsonAnswer(text, { ...init, headers });
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
  "Access-Control-Allow-Headers":
    "Authorization, DPoP, Content-Type, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id, Last-Event-ID",
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
