// The production server (server.ts) serves /mcp past Next's routing once the route module is loaded: the answers
// keep the app's security headers, and a read tool's audit event, which commits moments after its answer, is
// still committed when the server is stopped (SIGTERM) right after the call.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startApp, type RunningApp } from "../support/app";
import { createWatchCredential, mcp, obtainTokens } from "../support/oauth";
import { db } from "@/lib/db";

describe("the production server's /mcp", () => {
  let app: RunningApp;
  // A database of this suite's own, which stopping the app leaves in place to inspect.
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), "aw-production-server-"));

  before(async () => {
    app = await startApp({ databaseUrl: `file:${path.join(folder, "agent-wallet.db")}` });
  });
  after(async () => {
    await app?.stop();
    fs.rmSync(folder, { recursive: true, force: true });
  });

  it("answers with the app's security headers, through Next and directly alike", async () => {
    const { tokens } = await obtainTokens(app);
    // The first call may be the one that loads the route module (through Next); the later ones are served directly.
    for (let call = 0; call < 3; call++) {
      const response = await mcp(app, tokens.access_token, "tools/list");
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("x-content-type-options"), "nosniff");
      assert.equal(response.headers.get("x-frame-options"), "DENY");
      assert.equal(response.headers.get("access-control-allow-origin"), "*");
      assert.equal(((await response.json()) as { result: { tools: unknown[] } }).result.tools.length > 0, true);
    }
  });

  it("commits a read tool's audit event before it stops", async () => {
    let credentialId = "";
    const { tokens, client } = await obtainTokens(app, {
      credentials: async (userId) => {
        credentialId = (await createWatchCredential(userId, "Savings")).id;
        return [{ credentialId, mode: "read" }];
      },
    });
    const before = await db().auditEvent.count({ where: { type: "mcp.tool_called", clientId: client.client_id } });
    const response = await mcp(app, tokens.access_token, "tools/call", { name: "get_policy", arguments: { credential_id: credentialId } });
    assert.equal(response.status, 200);
    await app.stop();
    const events = await db().auditEvent.findMany({ where: { type: "mcp.tool_called", clientId: client.client_id } });
    assert.equal(events.length, before + 1);
    assert.equal(JSON.parse(events.at(-1)!.data).tool, "get_policy");
  });
});
