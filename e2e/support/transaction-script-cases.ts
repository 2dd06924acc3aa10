// What a transaction script (lib/db/transaction-script.ts) promises on either database, run against a real one by
// e2e/db/transaction-script.test.ts (SQLite) and e2e/postgres/transaction-script.test.ts (PostgreSQL), where
// statements the script does not wait for go out with the next one it does, as literals in one simple query.
import { it } from "node:test";
import assert from "node:assert/strict";

export type ScriptLib = { scripts: typeof import("@/lib/db/transaction-script"); db: typeof import("@/lib/db").db };

const INSERT_USER = `INSERT INTO "User" ("id", "email", "createdAt", "sessionVersion") VALUES (?, ?, ?, ?)`;

class Refusal extends Error {}

export function transactionScriptCases(lib: () => ScriptLib) {
  const userIds = async (prefix: string) =>
    (
      await lib()
        .db()
        .user.findMany({ where: { id: { startsWith: prefix } }, orderBy: { id: "asc" } })
    ).map((user) => user.id);

  it("hands each parameter to the database exactly as given, whatever quotes, placeholders or SQL it holds", async () => {
    const { runTransaction, unanswered, rowsOf, lastChangesOf } = lib().scripts;
    const hostile = [
      "o'brien@example.test",
      "back\\slash\\'@example.test",
      "$1 ? $2 ?? @example.test",
      `'); DROP TABLE "User"; --@example.test`,
      "名前 🙂 \n\t line@example.test",
      "E'\\x41'@example.test",
    ];
    const at = new Date("2026-11-27T12:34:56.789Z");
    const read = await runTransaction(function* () {
      for (const [index, email] of hostile.slice(0, -1).entries()) yield* unanswered(INSERT_USER, `lit-${index}`, email, at, index);
      const rows = yield* rowsOf<{ email: string }>(`SELECT "email" FROM "User" WHERE "id" LIKE ? ORDER BY "id"`, "lit-%");
      yield* lastChangesOf(INSERT_USER, `lit-${hostile.length - 1}`, hostile[hostile.length - 1], at, 7);
      return rows.map((row) => row.email);
    });
    assert.deepEqual(read, hostile.slice(0, -1), "the rows the script read back in its own transaction");
    const stored = await lib()
      .db()
      .user.findMany({ where: { id: { startsWith: "lit-" } }, orderBy: { id: "asc" } });
    assert.deepEqual(
      stored.map((user) => user.email),
      hostile,
    );
    assert.ok(
      stored.every((user) => user.createdAt.getTime() === at.getTime()),
      "dates to the millisecond, in UTC",
    );
    assert.deepEqual(
      stored.map((user) => user.sessionVersion),
      [0, 1, 2, 3, 4, 7],
    );
  });

  it("rolls everything back when a check refuses, the statements before and after it included", async () => {
    const { runTransaction, unanswered, checked, rowsOf } = lib().scripts;
    const refusal = new Refusal("refused by the check");
    const outcome = runTransaction(function* () {
      yield* unanswered(INSERT_USER, "chk-before", "before@example.test", new Date(), 0);
      yield* checked<{ id: string }>(
        (rows) => {
          if (!rows.length) throw refusal;
        },
        `SELECT "id" FROM "User" WHERE "id" = ?`,
        "nobody",
      );
      yield* unanswered(INSERT_USER, "chk-after", "after@example.test", new Date(), 0);
      return yield* rowsOf(`SELECT "id" FROM "User" WHERE "id" LIKE ?`, "chk-%");
    });
    await assert.rejects(outcome, (error) => error === refusal);
    assert.deepEqual(await userIds("chk-"), []);
  });

  it("judges a check the script left unanswered before it commits", async () => {
    const { runTransaction, unanswered, checked } = lib().scripts;
    await assert.rejects(
      runTransaction(function* () {
        yield* unanswered(INSERT_USER, "end-1", "end@example.test", new Date(), 0);
        yield* checked(
          () => {
            throw new Refusal("refused at the end");
          },
          `SELECT "id" FROM "User" WHERE "id" = ?`,
          "end-1",
        );
      }),
      Refusal,
    );
    assert.deepEqual(await userIds("end-"), []);
  });

  it("rolls back on a failing statement, and the next transaction runs", async () => {
    const { runTransaction, unanswered, lastChangesOf } = lib().scripts;
    await assert.rejects(
      runTransaction(function* () {
        yield* unanswered(INSERT_USER, "dup-1", "dup-1@example.test", new Date(), 0);
        yield* lastChangesOf(INSERT_USER, "dup-2", "dup-1@example.test", new Date(), 0);
      }),
      /unique|UNIQUE/i,
    );
    assert.deepEqual(await userIds("dup-"), []);
    const changes = await runTransaction(() => lib().scripts.lastChangesOf(INSERT_USER, "dup-3", "dup-3@example.test", new Date(), 0));
    assert.equal(changes, 1);
    assert.deepEqual(await userIds("dup-"), ["dup-3"]);
  });

  it("refuses a statement after the script's last one", async () => {
    const { runTransaction, lastChangesOf, rowsOf } = lib().scripts;
    await assert.rejects(
      runTransaction(function* () {
        yield* lastChangesOf(INSERT_USER, "last-1", "last-1@example.test", new Date(), 0);
        yield* rowsOf(`SELECT 1 AS one`);
      }),
      /after its last one/,
    );
  });
}
