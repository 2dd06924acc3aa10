// The audit append's one transaction, past the ORM (docs/decisions/0012-hot-path-sql-past-prisma.md): Prisma's
// interactive transaction and its per-field mapping of raw parameters cost about 100 µs an event, most of a read
// call's audit cost; these statements cost a tenth of that.
import type Database from "better-sqlite3";
import type pg from "pg";
import { directWriter, type Tx } from "@/lib/db";
import { sqliteDateTime } from "@/lib/db/prepared";
import {
  changesLater,
  lastChangesOf,
  onPostgres,
  rowsOf,
  unanswered,
  whenSqliteLockFree,
  type TransactionScript,
} from "@/lib/db/transaction-script";
import type { ChainPoint, StoredEvent } from "./chain";

export type EventRow = StoredEvent & { hash: string };

/** The rows to insert after the chain's head (null: the log is empty). */
export type Chain = (head: ChainPoint | null) => EventRow[];

const EVENT_COLUMNS = ["seq", "at", "type", "userId", "clientId", "credentialId", "requestId", "data", "prevHash", "hash"] as const;
const INTO = `INSERT INTO "AuditEvent" (${EVENT_COLUMNS.map((column) => `"${column}"`).join(", ")})`;
const INSERT = `${INTO} VALUES`;
/** One row's placeholders. */
const ROW = `(${EVENT_COLUMNS.map(() => "?").join(", ")})`;
const HEAD = `SELECT "seq", "hash" FROM "AuditEvent" ORDER BY "seq" DESC LIMIT 1`;

/**
 * Inserts the rows `chain` gives for the current head, in one transaction that holds the log's write lock from
 * reading the head to the commit, so the chain cannot fork: SQLite's BEGIN IMMEDIATE, PostgreSQL's advisory lock
 * (several instances). seq, the primary key, is still the last check.
 */
export async function appendChained(chain: Chain): Promise<void> {
  const writer = directWriter();
  if (writer.kind === "postgres") return appendOnPostgres(writer.pool, chain);
  return whenSqliteLockFree(() => appendOnSqlite(writer.connection(), chain));
}

type SqliteAppend = (chain: Chain) => void;
const sqliteAppends = new WeakMap<Database.Database, SqliteAppend>();

/** Synchronous from BEGIN to COMMIT: see sqliteWriter (lib/db/prepared.ts) for why it must be. */
function appendOnSqlite(connection: Database.Database, chain: Chain): void {
  let append = sqliteAppends.get(connection);
  if (!append) {
    const head = connection.prepare<[], ChainPoint>(HEAD);
    const insert = connection.prepare(`${INSERT} ${ROW}`);
    const transaction = connection.transaction((rowsOf: Chain) => {
      for (const row of rowsOf(head.get() ?? null)) insert.run(...sqliteValues(row));
    });
    append = (rowsOf) => transaction.immediate(rowsOf);
    sqliteAppends.set(connection, append);
  }
  append(chain);
}

function sqliteValues(row: EventRow): unknown[] {
  return EVENT_COLUMNS.map((column) => (column === "at" ? sqliteDateTime(row.at) : row[column]));
}

/**
 * In the caller's transaction script, so that the rows commit with the caller's writes: the rows `chain` gives after
 * the head, under the log's lock until that transaction ends. SQLite's transaction holds the write lock from its start
 * and reads the head. On PostgreSQL nothing waits for an answer: the lock and the rows go out with the caller's next
 * round trip, inserted only if the head is still the one this process's last append left (appendOnPostgres). The
 * answer, once the transaction has committed, says whether they were: when not (PostgreSQL, the head unknown here or
 * moved by another append), the caller appends them itself.
 */
export function* appendedIn(chain: Chain): TransactionScript<() => boolean> {
  const writer = directWriter();
  if (writer.kind === "sqlite") {
    const [head] = yield* rowsOf<ChainPoint>(HEAD);
    const rows = chain(head ?? null);
    yield* unanswered(`${INSERT} ${rows.map(() => ROW).join(", ")}`, ...rowValues(rows));
    return () => true;
  }
  const lastHead = lastHeads.get(writer.pool);
  if (lastHead === undefined) return () => false;
  const rows = chain(lastHead);
  yield* unanswered(LOCK);
  const changed = yield* changesLater(afterHead(rows), ...rowValues(rows), lastHead ? lastHead.hash : null);
  return () => {
    const appended = changed() > 0;
    if (appended) lastHeads.set(writer.pool, headAfter(rows));
    else lastHeads.delete(writer.pool);
    return appended;
  };
}

/** Any constant: the advisory lock that serializes appends across PostgreSQL sessions. */
const AUDIT_LOCK = 7_100_423;

/**
 * Takes the log's write lock in the caller's Prisma transaction, held until it ends, so that events appended there
 * chain to a head no one else can move: PostgreSQL's advisory lock; on SQLite a write that changes nothing, which
 * takes the database's one write lock (a transaction's first write does, whether or not it changes a row).
 */
export async function lockAuditLogIn(tx: Tx): Promise<void> {
  if (directWriter().kind === "postgres") await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${AUDIT_LOCK})`);
  else await tx.$executeRawUnsafe(`UPDATE "AuditEvent" SET "seq" = "seq" WHERE 0`);
}

/** The head each pool's last append in this process left, so that the next append need not read it first. */
const lastHeads = new WeakMap<pg.Pool, ChainPoint | null>();

/**
 * One round trip when the head is the one this process's last append left: BEGIN, the lock, an INSERT of the rows that
 * inserts them only if the head is still that one, COMMIT. Another instance's append, or an event appended in a
 * caller's transaction (recordAuditIn), moves it: then the INSERT inserts nothing and the append reads the head under
 * the lock and inserts after it (two round trips).
 */
async function appendOnPostgres(pool: pg.Pool, chain: Chain): Promise<void> {
  const lastHead = lastHeads.get(pool);
  try {
    if (lastHead !== undefined) {
      const rows = chain(lastHead);
      const appended = await onPostgres(pool, function* () {
        yield* unanswered(LOCK);
        return yield* lastChangesOf(afterHead(rows), ...rowValues(rows), lastHead ? lastHead.hash : null);
      });
      if (appended) return void lastHeads.set(pool, headAfter(rows));
    }
    let appendedRows: EventRow[] = [];
    await onPostgres(pool, function* () {
      yield* unanswered(LOCK);
      const [head] = yield* rowsOf<ChainPoint>(HEAD);
      appendedRows = chain(head ?? null);
      yield* lastChangesOf(`${INSERT} ${appendedRows.map(() => ROW).join(", ")}`, ...rowValues(appendedRows));
    });
    lastHeads.set(pool, headAfter(appendedRows));
  } catch (error) {
    lastHeads.delete(pool);
    throw error;
  }
}

const LOCK = `SELECT pg_advisory_xact_lock(${AUDIT_LOCK})`;
const HEAD_HASH = `SELECT "hash" FROM "AuditEvent" ORDER BY "seq" DESC LIMIT 1`;
/** One row's placeholders where no column gives them a type (a VALUES list in a SELECT): seq and at cast. */
const CAST: Partial<Record<(typeof EVENT_COLUMNS)[number], string>> = { seq: "CAST(? AS INTEGER)", at: "CAST(? AS TIMESTAMP(3))" };
const TYPED_ROW = `(${EVENT_COLUMNS.map((column) => CAST[column] ?? "?").join(", ")})`;

/** An INSERT of `rows` that inserts them only while the head's hash is the last parameter (null: the log is empty). */
const afterHead = (rows: EventRow[]) =>
  `${INTO} SELECT * FROM (VALUES ${rows.map(() => TYPED_ROW).join(", ")}) AS appended WHERE (${HEAD_HASH}) IS NOT DISTINCT FROM ?`;
const rowValues = (rows: EventRow[]) => rows.flatMap((row) => EVENT_COLUMNS.map((column) => row[column]));
const headAfter = (rows: EventRow[]): ChainPoint => ({ seq: rows[rows.length - 1].seq, hash: rows[rows.length - 1].hash });
