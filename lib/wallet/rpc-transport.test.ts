import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createPublicClient, HttpRequestError, TimeoutError } from "viem";
import { jsonRpcTransport } from "./rpc-transport";

/**
 * A node that answers by method: a result, an RPC error with revert data, a non-JSON 502, or nothing at all; a batch
 * call by call (in reverse order, as a node may), unless `refusesBatches`: then with one error object, as nodes that
 * do not take batches do.
 */
let server: http.Server;
let url = "";
let refusesBatches = false;
const seen: { method: string; authorization?: string; batch: number }[] = [];
type Call = { id: number; method: string };

function answerOf(call: Call): unknown {
  if (call.method === "eth_chainId") return { jsonrpc: "2.0", id: call.id, result: "0x7a69" };
  if (call.method === "eth_call")
    return { jsonrpc: "2.0", id: call.id, error: { code: 3, message: "execution reverted", data: "0x08c379a0" } };
  if (call.method === "eth_getBalance") return { jsonrpc: "2.0", id: call.id, result: "0x2a" };
  return null;
}

before(async () => {
  server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString()) as Call | Call[];
    const calls = Array.isArray(body) ? body : [body];
    for (const call of calls) seen.push({ method: call.method, authorization: request.headers.authorization, batch: calls.length });
    const answer = (answered: unknown, status = 200) =>
      response.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(answered));
    if (Array.isArray(body)) {
      if (refusesBatches) return answer({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "batches are not supported" } });
      return answer(body.map(answerOf).reverse());
    }
    if (body.method === "eth_gasPrice") return response.writeHead(502).end("Bad Gateway");
    const single = answerOf(body);
    if (single) return answer(single);
    // eth_blockNumber: never answered
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

const clientFor = (rpcUrl: string, timeoutMs = 2_000) => createPublicClient({ transport: jsonRpcTransport(rpcUrl, { timeoutMs }) });

/** The first error in the chain of causes that matches. */
function causeOf<T>(error: unknown, match: (cause: Error) => cause is Error & T): (Error & T) | null {
  for (let cause = error; cause instanceof Error; cause = cause.cause) if (match(cause)) return cause;
  return null;
}

describe("jsonRpcTransport", () => {
  it("answers the node's result, on one kept-alive connection", async () => {
    const client = clientFor(url);
    assert.equal(await client.getChainId(), 31337);
    let connections = 0;
    server.on("connection", () => connections++);
    for (let index = 0; index < 5; index++) await client.request({ method: "eth_chainId" });
    assert.equal(connections, 0, "the calls reuse the first call's connection");
  });

  it("keeps an RPC error's code and revert data, as viem's http transport does", async () => {
    const error = await clientFor(url)
      .request({ method: "eth_call", params: [{ to: `0x${"11".repeat(20)}` }, "latest"] })
      .catch((caught: unknown) => caught);
    const withData = causeOf(error, (cause): cause is Error & { data: unknown } => "data" in cause && cause.data === "0x08c379a0");
    assert.ok(withData, "the revert data is in the chain of causes");
    assert.match(String((error as Error).message), /execution reverted/);
  });

  it("says an HTTP failure with no JSON-RPC answer is one (HttpRequestError, with the status)", async () => {
    const error = await clientFor(url)
      .request({ method: "eth_gasPrice" })
      .catch((caught: unknown) => caught);
    const http = causeOf(error, (cause): cause is HttpRequestError => cause instanceof HttpRequestError);
    assert.equal(http?.status, 502);
  });

  it("gives up on a node that never answers after the timeout (TimeoutError)", async () => {
    const started = Date.now();
    const error = await clientFor(url, 300)
      .request({ method: "eth_blockNumber" })
      .catch((caught: unknown) => caught);
    assert.ok(
      causeOf(error, (cause): cause is TimeoutError => cause instanceof TimeoutError),
      String(error),
    );
    assert.ok(Date.now() - started < 2_000);
  });

  it("says a node that cannot be reached is not answering (HttpRequestError)", async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await clientFor(`http://127.0.0.1:${port}`)
      .request({ method: "eth_chainId" })
      .catch((caught: unknown) => caught);
    assert.ok(
      causeOf(error, (cause): cause is HttpRequestError => cause instanceof HttpRequestError),
      String(error),
    );
  });

  it("sends credentials in the URL as basic authorization", async () => {
    const withCredentials = new URL(url);
    withCredentials.username = "operator";
    withCredentials.password = "s3cret";
    await clientFor(withCredentials.href).getChainId();
    assert.equal(seen.at(-1)?.authorization, `Basic ${Buffer.from("operator:s3cret").toString("base64")}`);
  });

  it("sends calls made together as one batch, and gives each its own answer or error", async () => {
    const client = clientFor(url);
    const before = seen.length;
    const [chainId, balance, reverted] = await Promise.all([
      client.getChainId(),
      client.getBalance({ address: `0x${"22".repeat(20)}` }),
      client.request({ method: "eth_call", params: [{ to: `0x${"11".repeat(20)}` }, "latest"] }).catch((caught: unknown) => caught),
    ]);
    assert.deepEqual(
      seen.slice(before).map((call) => call.batch),
      [3, 3, 3],
      "one HTTP exchange carried the three calls",
    );
    assert.equal(chainId, 31337);
    assert.equal(balance, 42n);
    assert.match(String((reverted as Error).message), /execution reverted/);
  });

  it("asks one call at a time of a node that refuses batches", async () => {
    refusesBatches = true;
    try {
      const client = clientFor(url);
      const [chainId, balance] = await Promise.all([client.getChainId(), client.getBalance({ address: `0x${"22".repeat(20)}` })]);
      assert.equal(chainId, 31337);
      assert.equal(balance, 42n);
      const before = seen.length;
      await Promise.all([client.getChainId(), client.getBalance({ address: `0x${"22".repeat(20)}` })]);
      assert.deepEqual(
        seen.slice(before).map((call) => call.batch),
        [1, 1],
        "no batch once the node refused one",
      );
    } finally {
      refusesBatches = false;
    }
  });
});

describe("a kept-alive connection the node drops", () => {
  it("is asked again once on a new connection, for reads; a broadcast is not sent twice", async () => {
    // A node that drops a connection when a second request arrives on it, as one closing idle connections may.
    const connections = new Set<unknown>();
    const served = new WeakMap<object, number>();
    const dropping = http.createServer(async (request, response) => {
      connections.add(request.socket);
      for await (const chunk of request) void chunk;
      const count = (served.get(request.socket) ?? 0) + 1;
      served.set(request.socket, count);
      if (count > 1) return void request.socket.destroy();
      response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: 1, result: "0x7a69" }));
    });
    await new Promise<void>((resolve) => dropping.listen(0, "127.0.0.1", resolve));
    try {
      const transport = jsonRpcTransport(`http://127.0.0.1:${(dropping.address() as AddressInfo).port}`, { timeoutMs: 2_000 })({});
      const ask = (method: string) => transport.request({ method, params: [] } as never);
      assert.equal(await ask("eth_chainId"), "0x7a69");
      assert.equal(await ask("eth_chainId"), "0x7a69", "asked again on a new connection");
      assert.equal(connections.size, 2);
      await assert.rejects(ask("eth_sendRawTransaction"), HttpRequestError);
      assert.equal(connections.size, 2, "the broadcast was not sent again");
    } finally {
      dropping.closeAllConnections();
      dropping.close();
    }
  });
});
