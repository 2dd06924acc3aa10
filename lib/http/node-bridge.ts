import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";

/**
 * Bodies that declare a length up to this are read into memory before the Request is built: a web stream over
 * node's stream (Readable.toWeb) cost more than the rest of the bridge on /mcp's hot path. Longer or chunked
 * bodies stream, so the handler's own limit still decides, as before.
 */
const BUFFERED_BODY_LIMIT = 1024 * 1024;

/**
 * A Request whose signal, aborted when the client hangs up before the answer is complete, is made when first read:
 * a signal made for every request and followed by the Request's own cost a third as much as the rest of building
 * it, and only calls that wait (for a person's decision, on a subscription) read it.
 */
class NodeRequest extends Request {
  #hangUp: AbortSignal | undefined;
  readonly #res: ServerResponse;

  constructor(url: URL, init: RequestInit & { duplex?: "half" }, res: ServerResponse) {
    super(url, init);
    this.#res = res;
  }

  override get signal(): AbortSignal {
    if (!this.#hangUp) {
      const controller = new AbortController();
      const res = this.#res;
      if (res.closed) {
        if (!res.writableFinished) controller.abort();
      } else
        res.once("close", () => {
          if (!res.writableFinished) controller.abort();
        });
      this.#hangUp = controller.signal;
    }
    return this.#hangUp;
  }
}

/**
 * A node:http request as a web-standard Request, for a handler written against the Fetch API. Its signal aborts
 * when the client hangs up before the answer is complete, as Next's route handlers do. X-Forwarded-For gets the
 * peer's address when the request has none, as `next start` does (lib/limits/client-ip.ts counts on it).
 */
export async function webRequestOf(req: IncomingMessage, res: ServerResponse, origin: string): Promise<Request> {
  const headers = new Headers();
  for (let index = 0; index < req.rawHeaders.length; index += 2) headers.append(req.rawHeaders[index], req.rawHeaders[index + 1]);
  if (!headers.has("x-forwarded-for") && req.socket.remoteAddress) headers.set("x-forwarded-for", req.socket.remoteAddress);
  const init: RequestInit & { duplex?: "half" } = { method: req.method, headers };
  if (req.method !== "GET" && req.method !== "HEAD") {
    const declared = req.headers["content-length"] === undefined ? NaN : Number(req.headers["content-length"]);
    if (declared <= BUFFERED_BODY_LIMIT) init.body = await bufferedBody(req);
    else Object.assign(init, { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: "half" });
  }
  return new NodeRequest(new URL(req.url ?? "/", origin), init, res);
}

/** The whole body of a request whose declared length is within BUFFERED_BODY_LIMIT (node enforces that length). */
async function bufferedBody(req: IncomingMessage): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
  return new Uint8Array(body.buffer as ArrayBuffer, body.byteOffset, body.byteLength);
}

/**
 * Writes a web-standard Response to node:http: an event stream chunk by chunk as it is written (it flushes while a
 * tool waits), any other body in one write.
 */
export async function sendWebResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) headers["set-cookie"] = cookies;
  if (!response.body) {
    res.writeHead(response.status, headers).end();
    return;
  }
  if (!response.headers.get("content-type")?.startsWith("text/event-stream")) {
    const body = Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, headers).end(body);
    return;
  }
  res.writeHead(response.status, headers);
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    if (res.destroyed) break;
    res.write(chunk);
  }
  res.end();
}
