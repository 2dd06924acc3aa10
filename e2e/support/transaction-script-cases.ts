// What a transaction script (lib/db/transaction-script.ts) promises on either database, run against a real one by
// e2e/db/transaction-script.test.ts (SQLite) and e2e/postgres/transaction-script.test.ts (PostgreSQL), where
// statements the script does not wait for go out with the next one it does, as literals in one simple query.
import { it } from "node:test";
import assert from "node:assert/strict";

export type ScriptLib = {
  scripts: typeof import("@/lib/db/transaction-script");
  db: typeof import("@/lib/db").db;
  audit: typeof import("@/lib/audit");
};

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

  it("rolls everything back when a required row is missing, the statements before and after it included", async () => {
    const { runTransaction, unanswered, required, rowsOf } = lib().scripts;
    const refusal = new Refusal("refused: no such row");
    const outcome = runTransaction(function* () {
      yield* unanswered(INSERT_USER, "chk-before", "before@example.test", new Date(), 0);
      yield* required(() => refusal, `SELECT "id" FROM "User" WHERE "id" = ?`, "nobody");
      yield* unanswered(INSERT_USER, "chk-after", "after@example.test", new Date(), 0);
      return yield* rowsOf(`SELECT "id" FROM "User" WHERE "id" LIKE ?`, "chk-%");
    });
    await assert.rejects(outcome, (error) => error === refusal);
    assert.deepEqual(await userIds("chk-"), []);
  });

  it("refuses before it commits when the script's last statement lacks its required row", async () => {
    const { runTransaction, unanswered, required } = lib().scripts;
    await assert.rejects(
      runTransaction(function* () {
        yield* unanswered(INSERT_USER, "end-1", "end@example.test", new Date(), 0);
        // A write that returns no row: it changed nothing, so the transaction must not commit the INSERT.
        const update = `UPDATE "User" SET "email" = ? WHERE "id" = ? RETURNING "id"`;
        yield* required(() => new Refusal("refused at the end"), update, "x", "none");
      }),
      Refusal,
    );
    assert.deepEqual(await userIds("end-"), []);
  });

  it("commits a write whose required row is there, with the statements around it", async () => {
    const { runTransaction, unanswered, required, lastChangesOf } = lib().scripts;
    const changes = await runTransaction(function* () {
      yield* unanswered(INSERT_USER, "req-1", "req-1@example.test", new Date(), 0);
      yield* required(() => new Refusal("missing"), `UPDATE "User" SET "sessionVersion" = ? WHERE "id" = ? RETURNING "id"`, 5, "req-1");
      return yield* lastChangesOf(INSERT_USER, "req-2", "req-2@example.test", new Date(), 0);
    });
    assert.equal(changes, 1);
    const stored = await lib()
      .db()
      .user.findMany({ where: { id: { startsWith: "req-" } }, orderBy: { id: "asc" } });
    assert.deepEqual(
      stored.map((user) => [user.id, user.sessionVersion]),
      [
        ["req-1", 5],
        ["req-2", 0],
      ],
    );
  });

  it("answers several statements of one round trip, each in order, and commits with them when they are the last", async () => {
    const { runTransaction, answersOf, reading, writing } = lib().scripts;
    const answers = await runTransaction(() =>
      answersOf(
        [
          writing(INSERT_USER, "many-1", "many-1@example.test", new Date(), 0),
          reading(`SELECT "email" FROM "User" WHERE "id" = ?`, "many-1"),
          writing(`UPDATE "User" SET "sessionVersion" = ? WHERE "id" LIKE ?`, 3, "many-%"),
          reading(`SELECT "id" FROM "User" WHERE "id" = ?`, "nobody"),
        ],
        { last: true },
      ),
    );
    assert.deepEqual(
      answers.map((answer) => answer.changes),
      [1, 1, 1, 0],
    );
    assert.deepEqual(answers[1].rows, [{ email: "many-1@example.test" }]);
    assert.deepEqual(answers[3].rows, []);
    const stored = await lib()
      .db()
      .user.findUniqueOrThrow({ where: { id: "many-1" } });
    assert.equal(stored.sessionVersion, 3, "committed");
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

  /** An event appended as another instance appends it: after the head it reads, past this process's own appends. */
  const appendedElsewhere = async (marker: string) => {
    const { eventHash, GENESIS_HASH } = await import("@/lib/audit/chain");
    const head = await lib()
      .db()
      .auditEvent.findFirst({ orderBy: { seq: "desc" } });
    const event = {
      seq: (head?.seq ?? 0) + 1,
      at: new Date(),
      type: "mcp.tool_called",
      userId: null,
      clientId: null,
      credentialId: null,
      requestId: null,
      data: JSON.stringify({ marker }),
      prevHash: head?.hash ?? GENESIS_HASH,
    };
    await lib()
      .db()
      .auditEvent.create({ data: { ...event, hash: eventHash(event) } });
  };
  const markers = async (prefix: string) =>
    (
      await lib()
        .db()
        .auditEvent.findMany({ orderBy: { seq: "asc" } })
    )
      .map((event) => (JSON.parse(event.data) as { marker?: string }).marker)
      .filter((marker) => marker?.startsWith(prefix));

  it("appends audit events with the script's writes, chained after the head, even one another instance moved", async () => {
    const { runTransaction, unanswered } = lib().scripts;
    const { auditedIn, recordAudit, verifyAuditChain } = lib().audit;
    const event = (marker: string) => ({ type: "mcp.tool_called" as const, data: { marker } });
    await recordAudit(event("in-script-0"));
    await appendedElsewhere("in-script-elsewhere");
    for (const round of [1, 2]) {
      const audited = await runTransaction(function* () {
        yield* unanswered(INSERT_USER, `in-script-${round}`, `in-script-${round}@example.test`, new Date(), 0);
        return yield* auditedIn([event(`in-script-${round}a`), event(`in-script-${round}b`)]);
      });
      await audited();
    }
    assert.deepEqual(await userIds("in-script-"), ["in-script-1", "in-script-2"]);
    assert.deepEqual(await markers("in-script-"), [
      "in-script-0",
      "in-script-elsewhere",
      "in-script-1a",
      "in-script-1b",
      "in-script-2a",
      "in-script-2b",
    ]);
    assert.equal((await verifyAuditChain()).ok, true, "the chain is whole");
  });

  it("rolls audit events back with the script that refuses, and the log goes on from its head", async () => {
    const { runTransaction, unanswered, required } = lib().scripts;
    const { auditedIn, recordAudit, verifyAuditChain } = lib().audit;
    await recordAudit({ type: "mcp.tool_called", data: { marker: "rolled-0" } });
    await assert.rejects(
      runTransaction(function* () {
        yield* unanswered(INSERT_USER, "rolled-1", "rolled-1@example.test", new Date(), 0);
        yield* auditedIn([{ type: "mcp.tool_called", data: { marker: "rolled-1" } }]);
        // on PostgreSQL in the round trip that carries the events
        yield* required(() => new Refusal("refused after the events"), `SELECT 1 AS "one" WHERE 1 = 0`);
      }),
      Refusal,
    );
    await recordAudit({ type: "mcp.tool_called", data: { marker: "rolled-2" } });
    assert.deepEqual(await userIds("rolled-"), []);
    assert.deepEqual(await markers("rolled-"), ["rolled-0", "rolled-2"]);
    assert.equal((await verifyAuditChain()).ok, true, "the chain is whole");
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
