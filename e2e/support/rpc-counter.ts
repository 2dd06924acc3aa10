// A real HTTP proxy in front of the local node that records every JSON-RPC method it forwards: what reaches the
// chain, and what never does. It can also withhold the node's answer to some methods: the call reaches the node,
// the caller never hears back (a node or network that goes silent after taking a transaction).
import http from "node:http";
import { freePort } from "./app";

export type CountingProxy = { rpcUrl: string; methods: string[]; stop: () => Promise<void> };

export async function countingProxy(target: string, options: { withhold?: string[] } = {}): Promise<CountingProxy> {
  const methods: string[] = [];
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const calls = [JSON.parse(body.toString() || "null")].flat() as ({ method?: string } | null)[];
    methods.push(...calls.map((call) => call?.method ?? "(none)"));
    const answer = await fetch(target, { method: "POST", headers: { "Content-Type": "application/json" }, body });
    if (calls.some((call) => call?.method && options.withhold?.includes(call.method))) return;
    response.writeHead(answer.status, { "Content-Type": "application/json" }).end(Buffer.from(await answer.arrayBuffer()));
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    rpcUrl: `http://127.0.0.1:${port}`,
    methods,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
