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

function post(url: URL, agent: http.Agent, body: RpcBody, timeoutMs: number): Promise<{ status: number; text: string }> {
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
    request.on("error", reject);
    request.end(payload);
  });
}

/** A viem transport that posts each call to `rpcUrl`, giving up after `timeoutMs`. */
export function jsonRpcTransport(rpcUrl: string, options: { timeoutMs: number }): Transport {
  const url = new URL(rpcUrl);
  const agent = new (url.protocol === "https:" ? https.Agent : http.Agent)({ keepAlive: true });
  let id = 0;
  const request = async ({ method, params }: { method: string; params?: unknown }) => {
    const body: RpcBody = { jsonrpc: "2.0", id: ++id, method, params };
    let answered;
    try {
      answered = await post(url, agent, body, options.timeoutMs);
    } catch (error) {
      if (error instanceof TimeoutError) throw error;
      throw new HttpRequestError({ body, cause: error as Error, url: rpcUrl });
    }
    let answer: RpcAnswer | undefined;
    try {
      answer = JSON.parse(answered.text) as RpcAnswer;
    } catch {
      // not JSON: judged by its status below
    }
    if (answer?.error && typeof answer.error.code === "number") throw new RpcRequestError({ body, error: answer.error, url: rpcUrl });
    if (answered.status < 200 || answered.status > 299 || !answer || !("result" in answer)) {
      const details = answered.text.slice(0, 200) || `HTTP ${answered.status}`;
      throw new HttpRequestError({ body, details, status: answered.status, url: rpcUrl });
    }
    return answer.result;
  };
  return custom({ request }, { retryCount: 0 });
}
