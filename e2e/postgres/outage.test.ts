// PostgreSQL going away and coming back, on a private server this test starts (the shared one serves other
// suites): meanwhile every call fails at once with a clear 503 in its protocol's format, and afterwards the
// same app process answers again by itself.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort, startApp, type RunningApp } from "../support/app";
import { INITIALIZE_PARAMS, mcp, obtainTokens, refreshTokens } from "../support/oauth";

const postgresBin = (name: string) => {
  const versions = fs.readdirSync("/usr/lib/postgresql").sort();
  return path.join("/usr/lib/postgresql", versions[versions.length - 1], "bin", name);
};
/** PostgreSQL's tools refuse to run as root: they run as the postgres user. */
const asPostgres = (name: string, args: string[]) =>
  execFileSync("runuser", ["-u", "postgres", "--", postgresBin(name), ...args], { stdio: "pipe", timeout: 60_000 });

describe("the database goes away and comes back", { timeout: 180_000 }, () => {
  let app: RunningApp;
  let dataDir = "";
  let port = 0;
  const pgCtl = (action: "start" | "stop") =>
    asPostgres("pg_ctl", [
      action,
      "-D",
      dataDir,
      "-w",
      ...(action === "start" ? ["-o", `-p ${port} -k ${dataDir} -c listen_addresses=127.0.0.1`, "-l", `${dataDir}/log`] : ["-m", "fast"]),
    ]);

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aw-pg-"));
    fs.chmodSync(dataDir, 0o700);
    execFileSync("chown", ["postgres", dataDir]);
    port = await freePort();
    asPostgres("initdb", ["-D", dataDir, "-A", "trust", "-U", "postgres"]);
    pgCtl("start");
    asPostgres("createdb", ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "agent_wallet"]);
    app = await startApp({ databaseUrl: `postgresql://postgres@127.0.0.1:${port}/agent_wallet` });
  });
  after(async () => {
    await app?.stop();
    if (fs.existsSync(path.join(dataDir, "postmaster.pid"))) pgCtl("stop");
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("answers 503 with Retry-After meanwhile (a JSON-RPC error on /mcp), then recovers without a restart", async () => {
    const { client, tokens } = await obtainTokens(app);
    assert.equal((await mcp(app, tokens.access_token, "initialize", INITIALIZE_PARAMS)).status, 200);

    pgCtl("stop");
    const down = await mcp(app, tokens.access_token, "tools/list");
    assert.equal(down.status, 503);
    assert.equal(down.headers.get("retry-after"), "5");
    const body = (await down.json()) as { jsonrpc: string; error: { code: number; message: string } };
    assert.equal(body.jsonrpc, "2.0");
    assert.match(body.error.message, /database cannot be reached/);
    const refresh = await refreshTokens(app, client, tokens.refresh_token!);
    assert.equal(refresh.status, 503);
    assert.equal(((await refresh.json()) as { error: string }).error, "temporarily_unavailable");

    pgCtl("start");
    let status = 0;
    for (let attempt = 0; attempt < 40 && status !== 200; attempt++) {
      status = (await mcp(app, tokens.access_token, "tools/list")).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.equal(status, 200, "the same app process answers again");
  });
});
