import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";

/**
 * A node:http request as a web-standard Request, for a handler written against the Fetch API. Its signal aborts
 * when the client hangs up before the answer is complete, as Next's route handlers do. X-Forwarded-For gets the
 * peer's address when the request has none, as `next start` does (lib/limits/client-ip.ts counts on it).
 */
export function webRequestOf(req: IncomingMessage, res: ServerResponse, origin: string): Request {
  const hangUp = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) hangUp.abort();
  });
  const headers = new Headers();
  for (let index = 0; index < req.rawHeaders.length; index += 2) headers.append(req.rawHeaders[index], req.rawHeaders[index + 1]);
  if (!headers.has("x-forwarded-for") && req.socket.remoteAddress) headers.set("x-forwarded-for", req.socket.remoteAddress);
  const withBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(new URL(req.url ?? "/", origin), {
    method: req.method,
    headers,
    signal: hangUp.signal,
    ...(withBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: "half" } : {}),
  } as RequestInit);
}

/** Writes a web-standard Response to node:http, streaming its body (an event stream flushes as it is written). */
export async function sendWebResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) headers["set-cookie"] = cookies;
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    if (res.destroyed) break;
    res.write(chunk);
  }
  res.end();
}
