// A real HTTP proxy in front of the local node that records every JSON-RPC method it forwards: what reaches the
// chain, and what never does. It can also withhold the node's answer to some methods: the call reaches the node,
// the caller never hears back (a node or network that goes silent after taking a transaction); or act before a call
// reaches the node, or answer it with an error itself; or answer late, as a hosted provider's round trip does.
import http from "node:http";
import { freePort } from "./app";

export type CountingProxy = {
  rpcUrl: string;
  /** every call's method, in order */
  methods: string[];
  /** every call as it came (its method and params) */
  calls: RpcCall[];
  /** From now on each answer is passed back this many milliseconds after the node gave it. */
  delayAnswers: (ms: number) => void;
  stop: () => Promise<void>;
};

export type RpcCall = { id?: unknown; method?: string; params?: unknown[] };

/**
 * `withhold`: methods whose answer never comes back. `before`: runs before each call is passed on (a front-runner acting
 * on what it sees); when it returns an error, the caller gets that JSON-RPC error and the node never sees the call.
 * `delayMs`: each answer waits this long before it is passed back (changed later with `delayAnswers`).
 */
type ProxyOptions = {
  withhold?: string[];
  before?: (call: RpcCall) => Promise<{ code: number; message: string } | void>;
  delayMs?: number;
};

export async function countingProxy(target: string, options: ProxyOptions = {}): Promise<CountingProxy> {
  const methods: string[] = [];
  const recorded: RpcCall[] = [];
  let delayMs = options.delayMs ?? 0;
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const calls = [JSON.parse(body.toString() || "null")].flat() as (RpcCall | null)[];
    methods.push(...calls.map((call) => call?.method ?? "(none)"));
    recorded.push(...calls.map((call) => call ?? {}));
    for (const call of calls) {
      const error = call && (await options.before?.(call));
      if (error) {
        response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: call.id, error }));
        return;
      }
    }
    const answer = await fetch(target, { method: "POST", headers: { "Content-Type": "application/json" }, body });
    if (calls.some((call) => call?.method && options.withhold?.includes(call.method))) return;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    response.writeHead(answer.status, { "Content-Type": "application/json" }).end(Buffer.from(await answer.arrayBuffer()));
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    rpcUrl: `http://127.0.0.1:${port}`,
    methods,
    calls: recorded,
    delayAnswers: (ms) => {
      delayMs = ms;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
