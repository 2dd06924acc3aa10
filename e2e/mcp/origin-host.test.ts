// DNS-rebinding protection on /mcp (MCP transport spec): Origin against MCP_ALLOWED_ORIGINS, and,
// while BASE_URL is a loopback host, the Host header too. Raw node:http requests, so the test sets
// Host itself.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { startApp, type RunningApp } from "../support/app";
import { INITIALIZE_PARAMS, obtainTokens } from "../support/oauth";

type Reply = { status: number; headers: http.IncomingHttpHeaders; body: string };

/** POST /mcp initialize on 127.0.0.1:<port> with exactly these headers (Host included). */
function initialize(port: number, headers: Record<string, string>): Promise<Reply> {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: INITIALIZE_PARAMS });
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: "127.0.0.1",
        port,
        path: "/mcp",
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          "Content-Length": Buffer.byteLength(body),
          ...headers,
        },
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers, body: text }));
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

function expectForbidden(reply: Reply, message: RegExp) {
  assert.equal(reply.status, 403, reply.body);
  assert.match(String(reply.headers["content-type"]), /application\/json/);
  const body = JSON.parse(reply.body) as { jsonrpc: string; id: null; error: { code: number; message: string } };
  assert.equal(body.jsonrpc, "2.0");
  assert.equal(body.id, null);
  assert.equal(body.error.code, -32000);
  assert.match(body.error.message, message);
}

describe("/mcp Origin and Host checks, BASE_URL on localhost (the default allowed origins)", () => {
  let app: RunningApp;
  let bearer: string;
  let host: string;
  before(async () => {
    app = await startApp();
    bearer = `Bearer ${(await obtainTokens(app)).tokens.access_token}`;
    host = `localhost:${app.port}`;
  });
  after(() => app.stop());

  it("no Origin (a native client) → 200", async () => {
    const reply = await initialize(app.port, { Host: host, Authorization: bearer });
    assert.equal(reply.status, 200, reply.body);
  });

  it("the app's own origin → 200", async () => {
    const reply = await initialize(app.port, { Host: host, Authorization: bearer, Origin: app.baseUrl });
    assert.equal(reply.status, 200, reply.body);
  });

  it("a foreign Origin → 403 with a JSON-RPC error, before the bearer is looked at", async () => {
    for (const origin of ["https://evil.example", "null", `http://localhost:${app.port + 1}`, `http://127.0.0.1:${app.port}`]) {
      expectForbidden(await initialize(app.port, { Host: host, Authorization: bearer, Origin: origin }), /origin/);
    }
    const tokenless = await initialize(app.port, { Host: host, Origin: "https://evil.example" });
    expectForbidden(tokenless, /origin/);
    assert.equal(tokenless.headers["www-authenticate"], undefined);
  });

  it("a Host that is not a loopback host (DNS rebinding) → 403, even without an Origin", async () => {
    for (const rebound of [`evil.example:${app.port}`, "evil.example", `localhost.evil.example:${app.port}`]) {
      expectForbidden(await initialize(app.port, { Host: rebound, Authorization: bearer }), /loopback/);
    }
  });

  it("every loopback Host is served", async () => {
    for (const loopback of [`localhost:${app.port}`, `127.0.0.1:${app.port}`, `[::1]:${app.port}`, "localhost"]) {
      const reply = await initialize(app.port, { Host: loopback, Authorization: bearer });
      assert.equal(reply.status, 200, `${loopback}: ${reply.body}`);
    }
  });
});
