// Transaction scripts on PostgreSQL (e2e/support/transaction-script-cases.ts), where a round trip carries the
// statements the script did not wait for with the one it waits for, their parameters written in as literals.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createPostgresDatabase, type PostgresDatabase } from "../support/app";
import { transactionScriptCases, type ScriptLib } from "../support/transaction-script-cases";
import { migrateDatabase } from "@/lib/db/migrate";

describe("transaction scripts (PostgreSQL)", () => {
  let database: PostgresDatabase;
  let dataDir: string;
  let lib: ScriptLib;
  before(async () => {
    database = await createPostgresDatabase();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aw-pg-scripts-"));
    Object.assign(process.env, { DATA_DIR: dataDir, DATABASE_URL: database.url, APP_URL: "http://localhost:3999" });
    migrateDatabase(database.url);
    lib = { scripts: await import("@/lib/db/transaction-script"), db: (await import("@/lib/db")).db };
  });
  after(async () => {
    await (await import("@/lib/db")).disconnectDatabase();
    await database.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  transactionScriptCases(() => lib);

  it("refuses a string with a NUL, which PostgreSQL cannot store, and writes nothing", async () => {
    const { runTransaction, unanswered, lastChangesOf } = lib.scripts;
    await assert.rejects(
      runTransaction(function* () {
        yield* unanswered(
          `INSERT INTO "User" ("id", "email", "createdAt", "sessionVersion") VALUES (?, ?, ?, ?)`,
          "nul-1",
          "a@example.test",
          new Date(),
          0,
        );
        yield* lastChangesOf(
          `INSERT INTO "User" ("id", "email", "createdAt", "sessionVersion") VALUES (?, ?, ?, ?)`,
          "nul-2",
          "b\0@example.test",
          new Date(),
          0,
        );
      }),
      /NUL character/,
    );
    assert.equal(await lib.db().user.count({ where: { id: { startsWith: "nul-" } } }), 0);
  });
});
