// MCP_ALLOWED_ORIGINS replaces the default list, and a BASE_URL that is not a loopback host (a public
// deployment behind its own name) does not restrict Host. No token is needed: a request that passes
// the Origin and Host checks reaches the bearer check and gets its 401.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startApp, type RunningApp } from "../support/app";

describe("/mcp with MCP_ALLOWED_ORIGINS and a non-loopback BASE_URL", () => {
  let app: RunningApp;
  before(async () => {
    app = await startApp({
      baseHost: "wallet.test",
      appHost: "wallet.test",
      behindTls: true,
      env: { MCP_ALLOWED_ORIGINS: "https://inspector.example, http://localhost:6274" },
    });
  });
  after(() => app.stop());

  function post(headers: Record<string, string>) {
    // fetch sets Host from the URL: 127.0.0.1, which is not the configured wallet.test
    return fetch(`http://127.0.0.1:${app.port}/mcp`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
  }

  it("a configured origin passes to the bearer check (401)", async () => {
    for (const origin of ["https://inspector.example", "http://localhost:6274"]) {
      const response = await post({ Origin: origin });
      assert.equal(response.status, 401, await response.text());
    }
  });

  it("an origin not in the list → 403, the app's own included once the list is set", async () => {
    for (const origin of [app.configuredBaseUrl, "https://evil.example", "https://inspector.example:8443"]) {
      const response = await post({ Origin: origin });
      assert.equal(response.status, 403, origin);
      const body = (await response.json()) as { error: { code: number; message: string } };
      assert.equal(body.error.code, -32000);
    }
  });

  it("no Origin and any Host → the bearer check (401): Host is not restricted off loopback", async () => {
    const response = await post({});
    assert.equal(response.status, 401, await response.text());
  });
});
