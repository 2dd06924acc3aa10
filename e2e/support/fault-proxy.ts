// A real HTTP proxy in front of the local node that fails as hosted providers do: it answers a whole HTTP request with
// a status of its own (429 with Retry-After, 503), before the node sees it or after the node has taken it; it can
// change a call on its way (a node behind the provider's balancer that lags the others), or act before passing a
// request on (the same transaction reaching the node first by another way), or refuse one call with a JSON-RPC error
// of its own (a provider's cap on eth_getLogs' range) while the node answers the others. It records every request it
// gets, with when it came, so that a test counts the attempts and sees which calls went out together.
import http from "node:http";
import { freePort } from "./app";

export type ProxiedCall = { jsonrpc?: string; id?: unknown; method?: string; params?: unknown[] };

/** An HTTP answer of the proxy's own instead of the node's; `forwarded`: the node got the request (and acted) first. */
export type Fault = { status: number; retryAfter?: string; forwarded?: boolean };

export type FaultProxy = {
  rpcUrl: string;
  /** Each HTTP request the proxy got: its calls' methods (more than one: a batch), and when it came. */
  seen: { methods: string[]; at: number }[];
  /** What to answer a request with (its calls) instead of the node's answer; nothing: the node's answer. */
  fault?: (calls: ProxiedCall[]) => Fault | void;
  /** The JSON-RPC error the provider answers `call` with (HTTP 200), the node answering the batch's other calls. */
  refuse?: (call: ProxiedCall) => RpcRefusal | void;
  /** A call as the node gets it. */
  rewrite?: (call: ProxiedCall) => ProxiedCall;
  /** What happens before a request answered by the node is passed on to it. */
  before?: (calls: ProxiedCall[]) => Promise<void>;
  stop: () => Promise<void>;
};

export type RpcRefusal = { code: number; message: string };

/** A provider's 429 says why in a JSON-RPC error (one for the whole batch); its 5xx is a page of text. */
const bodyOf = (status: number) =>
  status === 429
    ? JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: 429, message: "Too many requests, try again later" } })
    : "Service Unavailable";

export async function faultProxy(target: string): Promise<FaultProxy> {
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString()) as ProxiedCall | ProxiedCall[];
    const calls = [body].flat();
    proxy.seen.push({ methods: calls.map((call) => call.method ?? "(none)"), at: Date.now() });
    const fault = proxy.fault?.(calls);
    if (!fault) await proxy.before?.(calls);
    const refusals = fault ? [] : calls.map((call) => proxy.refuse?.(call));
    const rewrite = proxy.rewrite ?? ((call: ProxiedCall) => call);
    const passed = calls.filter((_, index) => !refusals[index]).map(rewrite);
    const answer =
      passed.length && (!fault || fault.forwarded)
        ? await fetch(target, {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify(Array.isArray(body) ? passed : passed[0]),
          })
        : null;
    if (refusals.some(Boolean)) {
      const answered = [answer ? ((await answer.json()) as ProxiedCall | ProxiedCall[]) : []].flat();
      const answers = calls.map((call, index) => {
        const error = refusals[index];
        return error ? { jsonrpc: "2.0", id: call.id, error } : answered.find((one) => one.id === call.id);
      });
      response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(Array.isArray(body) ? answers : answers[0]));
      return;
    }
    if (fault) {
      const headers = { "Content-Type": fault.status === 429 ? "application/json" : "text/plain" };
      response
        .writeHead(fault.status, { ...headers, ...(fault.retryAfter && { "Retry-After": fault.retryAfter }) })
        .end(bodyOf(fault.status));
      return;
    }
    response.writeHead(answer!.status, { "Content-Type": "application/json" }).end(Buffer.from(await answer!.arrayBuffer()));
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const proxy: FaultProxy = {
    rpcUrl: `http://127.0.0.1:${port}`,
    seen: [],
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return proxy;
}
