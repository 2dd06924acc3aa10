import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { useTestDatabase, type TestDatabase } from "../support/database";
import { freePort } from "../support/app";

/** npm run audit:verify (scripts/audit-verify.ts) as an operator runs it: a child process reading the environment. */
function verify(env: Record<string, string>) {
  const result = spawnSync("npx", ["tsx", "scripts/audit-verify.ts"], {
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(result.error, undefined, String(result.error));
  return result;
}

/** A one-line answer, never a stack trace. */
function assertNoStack(output: string) {
  assert.doesNotMatch(output, /^\s+at /m, output);
}

describe("npm run audit:verify against a SQLite database", () => {
  let database: TestDatabase;
  let env: Record<string, string>;

  before(async () => {
    database = await useTestDatabase();
    env = { DATA_DIR: database.dataDir, DATABASE_URL: database.databaseUrl };
    const { recordAudit } = await import("@/lib/audit");
    await recordAudit({ type: "client.registered", clientId: "c_verify", data: { name: "Verified agent", redirectHosts: ["localhost"] } });
    await recordAudit({ type: "grant.approved", userId: "u_verify", clientId: "c_verify", data: { scope: "mcp", credentials: [] } });
    await recordAudit({ type: "token.issued", userId: "u_verify", clientId: "c_verify", data: { scope: "mcp", withRefresh: false } });
  });
  after(() => database.cleanup());

  it("verifies an intact chain: exit 0, the event count and the head hash", async () => {
    const { verifyAuditChain } = await import("@/lib/audit");
    const expected = await verifyAuditChain();
    assert.ok(expected.ok);
    const result = verify(env);
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.equal(result.stdout.trim(), `Audit chain verified: 3 events intact, head hash ${expected.head}`);
  });

  it("reports the seq of a row edited in the SQLite file: exit 1; restoring the row heals it", () => {
    const sqlite = new Database(database.databaseUrl.slice("file:".length));
    try {
      const { data } = sqlite.prepare("SELECT data FROM AuditEvent WHERE seq = 2").get() as { data: string };
      sqlite.prepare("UPDATE AuditEvent SET data = ? WHERE seq = 2").run(data.replace('"mcp"', '"mcp offline_access"'));
      const broken = verify(env);
      assert.equal(broken.status, 1, broken.stdout + broken.stderr);
      assert.match(broken.stdout, /^Audit chain broken at event 2: event 2 was altered \(1 event before it verified\)$/m);
      assertNoStack(broken.stdout + broken.stderr);

      sqlite.prepare("UPDATE AuditEvent SET data = ? WHERE seq = 2").run(data);
      assert.equal(verify(env).status, 0);
    } finally {
      sqlite.close();
    }
  });
});

describe("npm run audit:verify without a usable database", () => {
  // One data folder per case: config() generates secrets into it.
  const dataDirs: string[] = [];
  function emptyDataDir(): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "aw-verify-"));
    dataDirs.push(dir);
    return dir;
  }
  after(() => dataDirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

  it("an unreachable PostgreSQL server: exit 2, names the problem, prints neither the password nor a stack", async () => {
    const unreachable = `postgresql://wallet:hunter2-not-printed@127.0.0.1:${await freePort()}/wallet`;
    const result = verify({ DATA_DIR: emptyDataDir(), DATABASE_URL: unreachable });
    assert.equal(result.status, 2, result.stdout + result.stderr);
    assert.match(result.stderr, /cannot read the audit log from the PostgreSQL database: .*reach/i);
    assert.doesNotMatch(result.stdout + result.stderr, /hunter2/);
    assertNoStack(result.stderr);
  });

  it("a missing SQLite file: exit 2, names the path, creates nothing", () => {
    const dataDir = emptyDataDir();
    const result = verify({ DATA_DIR: dataDir, DATABASE_URL: "" });
    assert.equal(result.status, 2, result.stdout + result.stderr);
    assert.ok(result.stderr.includes(`no database at ${path.join(dataDir, "agent-wallet.db")}`), result.stderr);
    assert.deepEqual(fs.readdirSync(dataDir), []);
  });

  it("an invalid DATABASE_URL: exit 2, names the variable", () => {
    const result = verify({ DATA_DIR: emptyDataDir(), DATABASE_URL: "mysql://localhost/wallet" });
    assert.equal(result.status, 2, result.stdout + result.stderr);
    assert.match(result.stderr, /DATABASE_URL/);
    assertNoStack(result.stderr);
  });
});
