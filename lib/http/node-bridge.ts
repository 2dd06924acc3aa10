import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { CONNECTION_ADDRESS_HEADER } from "./connection-address";

/**
 * Bodies that declare a length up to this are read into memory when the handler reads them: a web stream over
 * node's stream (Readable.toWeb) cost more than the rest of the bridge on /mcp's hot path. Longer or chunked
 * bodies stream, so the handler's own limit still decides, as before.
 */
const BUFFERED_BODY_LIMIT = 1024 * 1024;
const UTF8 = new TextDecoder();

/**
 * Where a JSON answer (lib/http/respond.ts) shows the text it was made from while its body is unread, for
 * sendWebResponse to write as it is: reading a Response's body back goes through a web stream. A global symbol: the
 * routes are bundled apart from this.
 */
export const ANSWER_TEXT = Symbol.for("agent-wallet.answer-text");

/** A request's body, on the wire until read: to be read whole into memory, or streamed; none for GET and HEAD. */
type NodeBody = { from: IncomingMessage; whole: boolean } | undefined;

/**
 * A Request whose signal, aborted when the client hangs up before the answer is complete, is made when first read:
 * a signal made for every request and followed by the Request's own cost a third as much as the rest of building
 * it, and only calls that wait (for a person's decision, on a subscription) read it.
 *
 * Its body stays on the wire until the handler reads it, so /mcp answers a request it refuses (foreign Origin, rate
 * limit, no bearer, too large) without waiting for a body that may never come. A body read whole (bytes, text, json)
 * is read into memory and served as it is: undici would wrap it in a web stream at once, which with the reads that
 * take it apart cost about 10 µs of a /mcp call's 550 (on Node 20 a web stream is a transferable native object). It
 * becomes a web stream only when something reads it as one. A body refused unread is left for Node to drain, and
 * the connection stays usable, where a web stream made at once held the rest of the body unread until the
 * connection timed out.
 */
class NodeRequest extends Request {
  #hangUp: AbortSignal | undefined;
  readonly #res: ServerResponse;
  readonly #body: NodeBody;
  #used = false;
  #standard: Request | undefined;

  constructor(url: URL, init: RequestInit, res: ServerResponse, body: NodeBody) {
    super(url, init);
    this.#res = res;
    this.#body = body;
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

  /** The Request undici builds, its body a web stream: for a reader of the body as anything but whole bytes or text. */
  #withStream(): Request {
    if (this.#standard) return this.#standard;
    // Made once: each Readable.toWeb would add its own reader of the node stream.
    const body = this.#used || !this.#body ? null : Readable.toWeb(this.#body.from);
    this.#standard = new Request(this.url, { method: this.method, headers: this.headers, body, duplex: "half" } as RequestInit);
    return this.#standard;
  }

  /**
   * The whole body read into memory, once (as with any Request, a body is read at most once); undefined when it is
   * to be streamed.
   */
  async #inMemory(): Promise<Uint8Array<ArrayBuffer> | undefined> {
    if (!this.#body?.whole || this.#standard) return undefined;
    if (this.#used) throw new TypeError("Body is unusable: Body has already been read");
    this.#used = true;
    return wholeBody(this.#body.from);
  }

  override get body(): ReadableStream<Uint8Array<ArrayBuffer>> | null {
    return this.#body ? this.#withStream().body : null;
  }

  override get bodyUsed(): boolean {
    return this.#used || (this.#standard?.bodyUsed ?? false);
  }

  override async bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return (await this.#inMemory())?.slice() ?? this.#withStream().bytes();
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    return (await this.bytes()).buffer;
  }

  override async text(): Promise<string> {
    const bytes = await this.#inMemory();
    return bytes ? UTF8.decode(bytes) : this.#withStream().text();
  }

  override async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  override blob(): Promise<Blob> {
    return this.#withStream().blob();
  }

  override formData(): Promise<FormData> {
    return this.#withStream().formData();
  }

  override clone(): Request {
    return this.#withStream().clone();
  }
}

/**
 * A node:http request as a web-standard Request, for a handler written against the Fetch API. Its signal aborts
 * when the client hangs up before the answer is complete, as Next's route handlers do. The connection's address
 * is the one server.ts wrote (lib/http/connection-address.ts): a client's header of that name is not copied.
 */
export function webRequestOf(req: IncomingMessage, res: ServerResponse, origin: string): Request {
  const headers = new Headers();
  for (let index = 0; index < req.rawHeaders.length; index += 2) headers.append(req.rawHeaders[index], req.rawHeaders[index + 1]);
  const connection = req.headers[CONNECTION_ADDRESS_HEADER];
  if (typeof connection === "string") headers.set(CONNECTION_ADDRESS_HEADER, connection);
  let body: NodeBody;
  if (req.method !== "GET" && req.method !== "HEAD") {
    const declared = req.headers["content-length"] === undefined ? NaN : Number(req.headers["content-length"]);
    body = { from: req, whole: declared <= BUFFERED_BODY_LIMIT };
  }
  return new NodeRequest(new URL(req.url ?? "/", origin), { method: req.method, headers }, res, body);
}

/**
 * The whole body of a request whose declared length is within BUFFERED_BODY_LIMIT (node enforces that length), read
 * by its events: a stream's async iterator costs several promises a chunk. Refused when the client hangs up first.
 */
function wholeBody(req: IncomingMessage): Promise<Uint8Array<ArrayBuffer>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.once("error", reject);
    req.once("close", () => reject(new Error("The request's body was cut short")));
    req.once("end", () => {
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      resolve(new Uint8Array(body.buffer as ArrayBuffer, body.byteOffset, body.byteLength));
    });
  });
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
  // Before the body is asked for: a JSON answer makes its web stream when it is.
  const text = (response as { [ANSWER_TEXT]?: string })[ANSWER_TEXT];
  if (text !== undefined) {
    res.writeHead(response.status, headers).end(text);
    return;
  }
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
