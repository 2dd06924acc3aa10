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

describe("a node that is busy or failing (HTTP 429, 5xx)", () => {
  /**
   * A node that answers its next requests with `busy`'s statuses in turn (with a Retry-After, a body), then properly:
   * each call by method, a batch as an array. `got`: each request's methods, and when it arrived.
   */
  let node: http.Server;
  let nodeUrl = "";
  let busy: { status: number; retryAfter?: string; body?: string }[] = [];
  let got: { methods: string[]; at: number }[] = [];
  const HASH = `0x${"ab".repeat(32)}`;
  const resultOf = (call: Call) =>
    ({ eth_chainId: "0x7a69", eth_getBalance: "0x2a", eth_sendRawTransaction: HASH })[call.method as string] ?? null;

  before(async () => {
    node = http.createServer(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString()) as Call | Call[];
      const calls = [body].flat();
      got.push({ methods: calls.map((call) => call.method), at: Date.now() });
      const next = busy.shift();
      if (next)
        return response
          .writeHead(next.status, { "Content-Type": "text/plain", ...(next.retryAfter && { "Retry-After": next.retryAfter }) })
          .end(next.body ?? "Too busy");
      const answers = calls.map((call) => ({ jsonrpc: "2.0", id: call.id, result: resultOf(call) }));
      response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(Array.isArray(body) ? answers : answers[0]));
    });
    await new Promise<void>((resolve) => node.listen(0, "127.0.0.1", resolve));
    nodeUrl = `http://127.0.0.1:${(node.address() as AddressInfo).port}`;
  });
  after(() => {
    node.closeAllConnections();
    node.close();
  });

  /** A transport of its own (batching is a transport's state), and a call of it. */
  const transportFor = (timeoutMs = 4_000) => {
    const transport = jsonRpcTransport(nodeUrl, { timeoutMs })({});
    return (method: string) => transport.request({ method, params: [] } as never) as Promise<unknown>;
  };
  const fresh = (statuses: typeof busy) => {
    busy = statuses;
    got = [];
  };
  const statusOf = (error: unknown) => (error instanceof HttpRequestError ? error.status : String(error));

  it("asks a read again after a 429's Retry-After (seconds, or an HTTP date); past its timeout, fails at once with the 429", async () => {
    const ask = transportFor();
    fresh([{ status: 429, retryAfter: "1" }]);
    assert.equal(await ask("eth_chainId"), "0x7a69");
    assert.equal(got.length, 2);
    assert.ok(got[1].at - got[0].at >= 990, `asked again after ${got[1].at - got[0].at} ms`);

    // an HTTP date has whole seconds: at least 1.5 s from now
    fresh([{ status: 429, retryAfter: new Date(Date.now() + 2_500).toUTCString() }]);
    assert.equal(await ask("eth_chainId"), "0x7a69");
    assert.ok(got[1].at - got[0].at >= 1_400, `asked again after ${got[1].at - got[0].at} ms`);

    fresh([{ status: 429, retryAfter: "30" }]);
    const started = Date.now();
    assert.equal(statusOf(await ask("eth_chainId").catch((error: unknown) => error)), 429);
    assert.ok(Date.now() - started < 1_000, "no wait past the timeout");
    assert.equal(got.length, 1);
  });

  it("asks a read again after 503s with a growing wait, three times in all; then says the status", async () => {
    const ask = transportFor();
    fresh([{ status: 503 }, { status: 502, body: "<html>Bad Gateway</html>" }]);
    assert.equal(await ask("eth_getBalance"), "0x2a");
    assert.equal(got.length, 3);
    assert.ok(got[1].at - got[0].at >= 240 && got[2].at - got[1].at >= 490, JSON.stringify(got));

    fresh([{ status: 503 }, { status: 503 }, { status: 503 }, { status: 503 }]);
    assert.equal(statusOf(await ask("eth_getBalance").catch((error: unknown) => error)), 503);
    assert.equal(got.length, 3);
  });

  it("never sends a broadcast again: in a batch answered 429 it hears it; the batch's reads are asked again, batching on", async () => {
    const ask = transportFor();
    fresh([
      { status: 429, retryAfter: "0", body: JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: 429, message: "rate limited" } }) },
    ]);
    const [sent, chainId] = await Promise.allSettled([ask("eth_sendRawTransaction"), ask("eth_chainId")]);
    assert.equal(sent.status === "rejected" && statusOf(sent.reason), 429);
    assert.deepEqual(chainId, { status: "fulfilled", value: "0x7a69" });
    assert.deepEqual(
      got.map((request) => request.methods),
      [["eth_sendRawTransaction", "eth_chainId"], ["eth_chainId"]],
    );
    fresh([]);
    await Promise.all([ask("eth_chainId"), ask("eth_getBalance")]);
    assert.deepEqual(
      got.map((request) => request.methods),
      [["eth_chainId", "eth_getBalance"]],
      "still one batch",
    );
    // alone, answered 503: not sent again either
    fresh([{ status: 503 }]);
    assert.equal(statusOf(await ask("eth_sendRawTransaction").catch((error: unknown) => error)), 503);
    assert.equal(got.length, 1);
  });

  it("a node that does not batch (2xx, one answer for a batch): reads asked one at a time from then, a broadcast not again", async () => {
    const ask = transportFor();
    const refusal = JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "batches are not supported" } });
    fresh([{ status: 200, body: refusal }]);
    const [sent, chainId] = await Promise.allSettled([ask("eth_sendRawTransaction"), ask("eth_chainId")]);
    assert.ok(sent.status === "rejected" && sent.reason instanceof HttpRequestError, String(sent.status));
    assert.match((sent.reason as HttpRequestError).details, /not sent again/);
    assert.deepEqual(chainId, { status: "fulfilled", value: "0x7a69" });
    assert.equal(got.flatMap((request) => request.methods).filter((method) => method === "eth_sendRawTransaction").length, 1);
    fresh([]);
    await Promise.all([ask("eth_chainId"), ask("eth_getBalance")]);
    assert.deepEqual(
      got.map((request) => request.methods.length),
      [1, 1],
    );
  });

  it("a batch refused whole with a 4xx is no proof the node does not batch: each call hears it, batching on", async () => {
    const ask = transportFor();
    fresh([{ status: 413, body: JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "batch too large" } }) }]);
    const answers = await Promise.allSettled([ask("eth_chainId"), ask("eth_getBalance")]);
    assert.deepEqual(
      answers.map((answer) => answer.status),
      ["rejected", "rejected"],
    );
    assert.match(String((answers[0] as PromiseRejectedResult).reason.details), /batch too large/);
    fresh([]);
    await Promise.all([ask("eth_chainId"), ask("eth_getBalance")]);
    assert.deepEqual(
      got.map((request) => request.methods.length),
      [2],
    );
  });
});
