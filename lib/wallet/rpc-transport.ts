// JSON-RPC to a chain's node over node:http(s) on kept-alive connections, as a viem transport. viem's own `http`
// transport goes through the global fetch, which Next.js wraps for its cache and tracing: each chain call cost about
// three times the CPU (an allowance payment makes ten). Failures are the errors viem's `http` transport throws
// (RpcRequestError, HttpRequestError, TimeoutError), so callers tell an answer from a silence exactly as before. A
// node that is busy or failing (HTTP 429, 5xx) is asked again for reads, as hosted providers expect; never for a
// broadcast, which it may have taken.
import http from "node:http";
import https from "node:https";
import { custom, HttpRequestError, RpcRequestError, TimeoutError, type Transport } from "viem";

/** viem's own bound on an RPC answer's body. */
const MAX_RESPONSE_BYTES = 10_485_760;

type RpcBody = { jsonrpc: "2.0"; id: number; method: string; params?: unknown };
type RpcAnswer = { result?: unknown; error?: { code: number; message: string; data?: unknown } };

/** Calls that change nothing when a node sees them twice: all but a broadcast, which is never sent again unasked. */
const repeatable = (body: RpcBody | RpcBody[]) => [body].flat().every((call) => call.method !== "eth_sendRawTransaction");

/** A node rate-limiting or failing, not answering the calls: reads are asked again, and no answer is read from it. */
const busy = (status: number) => status === 429 || status >= 500;

/** How many times in all a read answered busy is asked, and the wait before the second try (doubled after). */
const TRIES = 3;
const FIRST_WAIT_MS = 250;

/** A Retry-After header (seconds, or an HTTP date) in milliseconds from now; null when there is none to read. */
function retryAfterMs(header: string | undefined): number | null {
  if (!header) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

type Answered = { status: number; text: string; retryAfter: string | undefined };

function post(url: URL, agent: http.Agent, body: RpcBody | RpcBody[], timeoutMs: number, retried = false): Promise<Answered> {
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
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          text: Buffer.concat(chunks).toString("utf8"),
          retryAfter: response.headers["retry-after"],
        }),
      );
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

const broadcast = (call: Waiting) => call.body.method === "eth_sendRawTransaction";

/**
 * A viem transport that posts each call to `rpcUrl`, giving up after `timeoutMs`. Calls made in the same turn of the
 * event loop (a Promise.all of reads) go out as one JSON-RPC batch: one HTTP exchange instead of one each. A node
 * that answers a batch with well-formed JSON that is not an array of answers (HTTP 2xx) does not take batches: it is
 * asked one call at a time from then on. Reads answered busy (HTTP 429, 5xx) are asked again up to three times in
 * all, after the node's Retry-After or a doubling wait, within their timeout; a broadcast is never sent again.
 */
export function jsonRpcTransport(rpcUrl: string, options: { timeoutMs: number }): Transport {
  const url = new URL(rpcUrl);
  const agent = new (url.protocol === "https:" ? https.Agent : http.Agent)({ keepAlive: true });
  let id = 0;
  let batches = true;
  let waiting: Waiting[] = [];

  /** One call's answer: its result, or the error viem's http transport would throw for it. */
  const settle = (call: Waiting, answered: Answered, answer: RpcAnswer | undefined) => {
    const { status, text } = answered;
    if (answer?.error && typeof answer.error.code === "number")
      return call.reject(new RpcRequestError({ body: call.body, error: answer.error, url: rpcUrl }));
    if (status < 200 || status > 299 || !answer || !("result" in answer)) {
      const details = text.slice(0, 200) || `HTTP ${status}`;
      return call.reject(new HttpRequestError({ body: call.body, details, status, url: rpcUrl }));
    }
    call.resolve(answer.result);
  };

  /**
   * A busy answer, whatever its body says: its reads are asked again (batching stays as it was) when tries are left and
   * the wait ends before their deadline; the others hear it as an HttpRequestError with its status. A broadcast always
   * does: a rate limit may answer a batch after the node took its transaction, which must not be sent twice.
   */
  const askAgain = (calls: Waiting[], answered: Answered, deadline: number, tries: number) => {
    const wait = retryAfterMs(answered.retryAfter) ?? FIRST_WAIT_MS * 2 ** (tries - 1);
    const retrying = tries < TRIES && Date.now() + wait < deadline;
    const again: Waiting[] = [];
    for (const call of calls) {
      if (retrying && !broadcast(call)) again.push(call);
      else settle(call, answered, undefined);
    }
    if (again.length) setTimeout(() => void send(again, deadline, tries + 1), wait);
  };

  /**
   * A batch answered with well-formed JSON that is not an array, HTTP 2xx: a node that does not take batches. Its reads
   * are asked one at a time; a broadcast in it is not, as the node may have taken it. (A broadcast could instead always
   * go alone, but the relayer asks for its receipt in the same exchange, which a node that mines at once already has.)
   */
  const unbatched = (calls: Waiting[], answered: Answered, deadline: number, tries: number) => {
    batches = false;
    for (const call of calls) {
      if (!broadcast(call)) void send([call], deadline, tries);
      else {
        const details = "the node answered a batch with one answer; the transaction is not sent again, as the node may have taken it";
        call.reject(new HttpRequestError({ body: call.body, details, status: answered.status, url: rpcUrl }));
      }
    }
  };

  const send = async (calls: Waiting[], deadline = Date.now() + options.timeoutMs, tries = 1) => {
    const body = calls.length === 1 ? calls[0].body : calls.map((call) => call.body);
    let answered;
    try {
      answered = await post(url, agent, body, deadline - Date.now());
    } catch (error) {
      for (const call of calls)
        call.reject(error instanceof TimeoutError ? error : new HttpRequestError({ body: call.body, cause: error as Error, url: rpcUrl }));
      return;
    }
    if (busy(answered.status)) return askAgain(calls, answered, deadline, tries);
    let parsed: unknown;
    try {
      parsed = JSON.parse(answered.text);
    } catch {
      // not JSON: judged by its status below
    }
    if (calls.length === 1) return settle(calls[0], answered, parsed as RpcAnswer | undefined);
    if (!Array.isArray(parsed)) {
      const ok = answered.status >= 200 && answered.status <= 299;
      if (ok && parsed !== undefined) return unbatched(calls, answered, deadline, tries);
      // Not JSON, or a refusal (4xx) of the whole batch: no proof the node does not batch; each call hears it.
      for (const call of calls) settle(call, answered, parsed as RpcAnswer | undefined);
      return;
    }
    const byId = new Map((parsed as (RpcAnswer & { id?: unknown })[]).map((answer) => [answer?.id, answer]));
    for (const call of calls) settle(call, answered, byId.get(call.body.id));
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
