// JSON-RPC to a chain's node over node:http(s) on kept-alive connections, as a viem transport. viem's own `http`
// transport goes through the global fetch, which Next.js wraps for its cache and tracing: each chain call cost about
// three times the CPU (an allowance payment makes ten). Failures are the errors viem's `http` transport throws
// (RpcRequestError, HttpRequestError, TimeoutError), so callers tell an answer from a silence exactly as before.
import http from "node:http";
import https from "node:https";
import { custom, HttpRequestError, RpcRequestError, TimeoutError, type Transport } from "viem";

/** viem's own bound on an RPC answer's body. */
const MAX_RESPONSE_BYTES = 10_485_760;

type RpcBody = { jsonrpc: "2.0"; id: number; method: string; params?: unknown };
type RpcAnswer = { result?: unknown; error?: { code: number; message: string; data?: unknown } };

/** Calls that change nothing when a node sees them twice: all but a broadcast, which is never sent again unasked. */
const repeatable = (body: RpcBody | RpcBody[]) => [body].flat().every((call) => call.method !== "eth_sendRawTransaction");

function post(
  url: URL,
  agent: http.Agent,
  body: RpcBody | RpcBody[],
  timeoutMs: number,
  retried = false,
): Promise<{ status: number; text: string }> {
  const payload = JSON.stringify(body);
  const headers: http.OutgoingHttpHeaders = { "content-type": "application/json", "content-length": Buffer.byteLength(payload) };
  // An RPC URL may carry its credentials as user:password@ (viem sends them as basic authorization too).
  if (url.username) {
    const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.authorization = `Basic ${Buffer.from(credentials).toString("base64")}`;
  }
  const send = url.protocol === "https:" ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const request = send(url, { method: "POST", agent, headers }, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) request.destroy(new Error(`the answer is larger than ${MAX_RESPONSE_BYTES} bytes`));
        else chunks.push(chunk);
      });
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
      response.on("error", reject);
    });
    const timer = setTimeout(() => request.destroy(new TimeoutError({ body, url: url.href })), timeoutMs);
    request.on("close", () => clearTimeout(timer));
    request.on("error", (error: NodeJS.ErrnoException) => {
      // A kept-alive connection the node closed as this request reused it (its idle timeout, a restart): asked once more
      // on a new one, as Node's documentation has it for requests that may be repeated.
      if (!retried && request.reusedSocket && error.code === "ECONNRESET" && repeatable(body))
        resolve(post(url, agent, body, timeoutMs, true));
      else reject(error);
    });
    request.end(payload);
  });
}

/** A call waiting for the next post, with how to hand it its answer. */
type Waiting = { body: RpcBody; resolve: (result: unknown) => void; reject: (error: unknown) => void };

/**
 * A viem transport that posts each call to `rpcUrl`, giving up after `timeoutMs`. Calls made in the same turn of the
 * event loop (a Promise.all of reads) go out as one JSON-RPC batch: one HTTP exchange instead of one each. A node
 * that answers a batch with anything but an array of answers is asked one call at a time from then on.
 */
export function jsonRpcTransport(rpcUrl: string, options: { timeoutMs: number }): Transport {
  const url = new URL(rpcUrl);
  const agent = new (url.protocol === "https:" ? https.Agent : http.Agent)({ keepAlive: true });
  let id = 0;
  let batches = true;
  let waiting: Waiting[] = [];

  /** One call's answer: its result, or the error viem's http transport would throw for it. */
  const settle = (call: Waiting, status: number, text: string, answer: RpcAnswer | undefined) => {
    if (answer?.error && typeof answer.error.code === "number")
      return call.reject(new RpcRequestError({ body: call.body, error: answer.error, url: rpcUrl }));
    if (status < 200 || status > 299 || !answer || !("result" in answer)) {
      const details = text.slice(0, 200) || `HTTP ${status}`;
      return call.reject(new HttpRequestError({ body: call.body, details, status, url: rpcUrl }));
    }
    call.resolve(answer.result);
  };

  const send = async (calls: Waiting[]) => {
    const body = calls.length === 1 ? calls[0].body : calls.map((call) => call.body);
    let answered;
    try {
      answered = await post(url, agent, body, options.timeoutMs);
    } catch (error) {
      for (const call of calls)
        call.reject(error instanceof TimeoutError ? error : new HttpRequestError({ body: call.body, cause: error as Error, url: rpcUrl }));
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(answered.text);
    } catch {
      // not JSON: judged by its status below
    }
    if (calls.length === 1) return settle(calls[0], answered.status, answered.text, parsed as RpcAnswer | undefined);
    if (!Array.isArray(parsed)) {
      batches = false;
      for (const call of calls) void send([call]);
      return;
    }
    const byId = new Map((parsed as (RpcAnswer & { id?: unknown })[]).map((answer) => [answer?.id, answer]));
    for (const call of calls) settle(call, answered.status, answered.text, byId.get(call.body.id));
  };

  const request = ({ method, params }: { method: string; params?: unknown }) =>
    new Promise<unknown>((resolve, reject) => {
      const call = { body: { jsonrpc: "2.0", id: ++id, method, params } as RpcBody, resolve, reject };
      if (!batches) return void send([call]);
      waiting.push(call);
      if (waiting.length > 1) return;
      setImmediate(() => {
        const calls = waiting;
        waiting = [];
        void send(calls);
      });
    });
  return custom({ request }, { retryCount: 0 });
}
