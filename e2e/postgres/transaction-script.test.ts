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
    lib = {
      scripts: await import("@/lib/db/transaction-script"),
      db: (await import("@/lib/db")).db,
      audit: await import("@/lib/audit"),
    };
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

  // The rate limits' store writes past the ORM; pg alone would read a timestamp in the process's time zone.
  it("writes and reads a time past the ORM as the ORM does, in any time zone of the process", async () => {
    const { queryPastOrm, db } = await import("@/lib/db");
    const zone = process.env.TZ;
    process.env.TZ = "America/New_York";
    try {
      const expire = new Date("2026-07-01T12:34:56.789Z");
      const [row] = await queryPastOrm<{ expire: Date }>(
        `INSERT INTO "RateLimit" ("key", "points", "expire") VALUES (?, ?, ?) RETURNING "expire"`,
        ["utc-key", 1, expire],
      );
      assert.equal(row.expire.toISOString(), expire.toISOString(), "read back as written");
      const stored = await db().rateLimit.findUniqueOrThrow({ where: { key: "utc-key" } });
      assert.equal(stored.expire?.toISOString(), expire.toISOString(), "the ORM reads what was written");
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });
});
