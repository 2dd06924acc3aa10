// PostgreSQL going away and coming back, on a private server this test starts (the shared one serves other
// suites): meanwhile every call fails at once with a clear 503 in its protocol's format, and afterwards the
// same app process answers again by itself.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { startApp, type RunningApp } from "../support/app";
import { INITIALIZE_PARAMS, mcp, obtainTokens, refreshTokens } from "../support/oauth";
import { createPostgresServer, type PostgresServer } from "@/scripts/postgres-server.mjs";

describe("the database goes away and comes back", { timeout: 180_000 }, () => {
  let app: RunningApp;
  let server: PostgresServer;

  before(async () => {
    server = await createPostgresServer();
    const admin = new pg.Client({ connectionString: `${server.url}/postgres` });
    await admin.connect();
    await admin.query("CREATE DATABASE agent_wallet");
    await admin.end();
    app = await startApp({ databaseUrl: `${server.url}/agent_wallet` });
  });
  after(async () => {
    await app?.stop();
    await server?.remove();
  });

  it("answers 503 with Retry-After meanwhile (a JSON-RPC error on /mcp), then recovers without a restart", async () => {
    const { client, tokens } = await obtainTokens(app);
    assert.equal((await mcp(app, tokens.access_token, "initialize", INITIALIZE_PARAMS)).status, 200);

    await server.stop();
    const down = await mcp(app, tokens.access_token, "tools/list");
    assert.equal(down.status, 503);
    assert.equal(down.headers.get("retry-after"), "5");
    const body = (await down.json()) as { jsonrpc: string; error: { code: number; message: string } };
    assert.equal(body.jsonrpc, "2.0");
    assert.match(body.error.message, /database cannot be reached/);
    const refresh = await refreshTokens(app, client, tokens.refresh_token!);
    assert.equal(refresh.status, 503);
    assert.equal(((await refresh.json()) as { error: string }).error, "temporarily_unavailable");

    await server.start();
    let status = 0;
    for (let attempt = 0; attempt < 40 && status !== 200; attempt++) {
      status = (await mcp(app, tokens.access_token, "tools/list")).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.equal(status, 200, "the same app process answers again");
  });
});
