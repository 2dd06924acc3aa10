// Clients that would hold the server's connections, over raw TCP against the started app: /mcp answers a request it
// refuses before reading a body that never comes; a client that trickles its headers, or opens a connection and
// says nothing, or leaves a kept-alive connection idle, is cut off by the server's timeouts (set low here); a tool
// call that waits longer than the request timeout is still answered (only receiving the request is timed); and
// past HTTP_MAX_CONNECTIONS a new connection is closed at once.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { startApp, type RunningApp } from "../support/app";
import { mcp, signerGrant } from "../support/oauth";
import { db } from "@/lib/db";

function connect(app: RunningApp): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(app.port, "127.0.0.1", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Everything the server sends until it closes the connection (a reset counts as closing); rejects if it stays open. */
function closedByServer(socket: net.Socket, within: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = "";
    const timer = setTimeout(() => reject(new Error(`still open after ${within} ms; received ${JSON.stringify(received)}`)), within);
    socket.on("data", (chunk) => (received += chunk));
    socket.on("error", () => {});
    socket.once("close", () => {
      clearTimeout(timer);
      resolve(received);
    });
  });
}

/** The status line and headers of the next answer on `socket`; rejects if the connection closes first. */
function answerHead(socket: net.Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = "";
    const onData = (chunk: Buffer) => {
      received += chunk;
      const end = received.indexOf("\r\n\r\n");
      if (end < 0) return;
      socket.off("data", onData);
      socket.off("close", onClose);
      resolve(received.slice(0, end));
    };
    const onClose = () => reject(new Error(`closed without an answer; received ${JSON.stringify(received)}`));
    socket.on("data", onData);
    socket.once("close", onClose);
    socket.on("error", () => {});
  });
}

describe("slow and idle clients", { timeout: 120_000 }, () => {
  let app: RunningApp;
  before(async () => {
    app = await startApp({
      env: { HTTP_HEADERS_TIMEOUT_SECONDS: "1", HTTP_REQUEST_TIMEOUT_SECONDS: "2", HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: "1" },
    });
    // /mcp is served past Next's routing once its route module has loaded: the requests below reach that path.
    assert.equal((await mcp(app, null, "ping")).status, 401);
  });
  after(() => app?.stop());

  for (const [what, headers, status] of [
    ["no bearer", "", "401"],
    ["an unknown bearer", "Authorization: Bearer nope\r\n", "401"],
    ["a foreign Origin", "Origin: https://evil.example\r\n", "403"],
  ] as const) {
    it(`/mcp with ${what} is answered ${status} at once, though the body it declared never comes`, async () => {
      const socket = await connect(app);
      const head = `POST /mcp HTTP/1.1\r\nHost: localhost:${app.port}\r\nContent-Type: application/json\r\n${headers}`;
      socket.write(`${head}Content-Length: 500000\r\n\r\n{"jsonrpc"`);
      const answer = await answerHead(socket);
      assert.match(answer, new RegExp(`^HTTP/1.1 ${status} `), answer);
      // The body still owed keeps the connection from serving another request: the request timeout ends it.
      await closedByServer(socket, 20_000);
    });
  }

  it("a client that trickles its headers is cut off", async () => {
    const socket = await connect(app);
    socket.write(`GET / HTTP/1.1\r\nHost: localhost:${app.port}\r\n`);
    const trickle = setInterval(() => socket.writable && socket.write("X-Slow: a\r\n"), 200);
    try {
      const received = await closedByServer(socket, 20_000);
      assert.match(received, /^(HTTP\/1.1 408 |$)/, "nothing but a 408 before the cut");
    } finally {
      clearInterval(trickle);
    }
  });

  it("a silent connection and an idle kept-alive one are closed; a call that waits past the request timeout is answered", async () => {
    const silent = await connect(app);
    await closedByServer(silent, 20_000);

    const idle = await connect(app);
    idle.write(`GET /.well-known/oauth-authorization-server HTTP/1.1\r\nHost: localhost:${app.port}\r\n\r\n`);
    assert.match(await answerHead(idle), /^HTTP\/1.1 200 /);
    await closedByServer(idle, 20_000);

    // Only receiving a request is timed: an answer that waits for the person is not cut off.
    const { bearer, grantId, clientId, credentialId } = await signerGrant(app);
    const grant = await db().grant.findUniqueOrThrow({ where: { id: grantId } });
    const request = await db().agentRequest.create({
      data: {
        id: `rq_slow_${Date.now()}`,
        userId: grant.userId,
        grantId,
        clientId,
        credentialId,
        kind: "sign_message",
        payload: JSON.stringify({ kind: "sign_message", message: "wait" }),
        digest: "0x00",
        createdAt: new Date(),
        expiresAt: new Date(Date.now() + 600_000),
      },
    });
    const response = await mcp(app, bearer, "tools/call", { name: "get_request", arguments: { request_id: request.id, wait_seconds: 4 } });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { result: { structuredContent: { status: string } } };
    assert.equal(body.result.structuredContent.status, "pending");
  });
});

describe("the connection cap", { timeout: 120_000 }, () => {
  const CAP = 3;
  let app: RunningApp;
  before(async () => {
    app = await startApp({ env: { HTTP_MAX_CONNECTIONS: String(CAP), HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: "60" } });
  });
  after(() => app?.stop());

  /** A connection kept alive after one answered request, or null when the server closed it without an answer. */
  async function heldConnection(): Promise<net.Socket | null> {
    const socket = await connect(app);
    socket.write(`GET /.well-known/oauth-authorization-server HTTP/1.1\r\nHost: localhost:${app.port}\r\n\r\n`);
    try {
      assert.match(await answerHead(socket), /^HTTP\/1.1 200 /);
      return socket;
    } catch {
      return null;
    }
  }

  it(`past ${CAP} connections a new one is closed without an answer, and served again once one ends`, async () => {
    // Connections the test process kept from starting the app may hold some of the places: count those this one gets.
    const held: net.Socket[] = [];
    let refused = false;
    for (let attempt = 0; attempt < CAP + 5 && !refused; attempt++) {
      const socket = await heldConnection();
      if (socket) held.push(socket);
      else refused = true;
    }
    try {
      assert.ok(refused, `a connection beyond the cap of ${CAP} was refused (${held.length} were served)`);
      assert.ok(held.length >= 1 && held.length <= CAP, `${held.length} connections were served`);
      held.pop()!.destroy();
      let served: net.Socket | null = null;
      for (let tries = 0; tries < 50 && !served; tries++) {
        served = await heldConnection();
        if (!served) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(served, "a place freed is served again");
      held.push(served);
    } finally {
      for (const socket of held) socket.destroy();
    }
  });
});
