// The audit append's one transaction, past the ORM (docs/decisions/0012-hot-path-sql-past-prisma.md): Prisma's
// interactive transaction and its per-field mapping of raw parameters cost about 100 µs an event, most of a read
// call's audit cost; these statements cost a tenth of that.
import type Database from "better-sqlite3";
import type pg from "pg";
import { directWriter, type Tx } from "@/lib/db";
import { sqliteDateTime } from "@/lib/db/prepared";
import { lastChangesOf, onPostgres, rowsOf, unanswered, whenSqliteLockFree } from "@/lib/db/transaction-script";
import type { ChainPoint, StoredEvent } from "./chain";

export type EventRow = StoredEvent & { hash: string };

/** The rows to insert after the chain's head (null: the log is empty). */
export type Chain = (head: ChainPoint | null) => EventRow[];

const EVENT_COLUMNS = ["seq", "at", "type", "userId", "clientId", "credentialId", "requestId", "data", "prevHash", "hash"] as const;
const INSERT = `INSERT INTO "AuditEvent" (${EVENT_COLUMNS.map((column) => `"${column}"`).join(", ")}) VALUES`;
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

/** Two round trips: BEGIN, the lock and the head's read; then the rows' INSERT with COMMIT (lib/db/transaction-script.ts). */
function appendOnPostgres(pool: pg.Pool, chain: Chain): Promise<void> {
  return onPostgres(pool, function* () {
    yield* unanswered(`SELECT pg_advisory_xact_lock(${AUDIT_LOCK})`);
    const [head] = yield* rowsOf<ChainPoint>(HEAD);
    const rows = chain(head ?? null);
    yield* lastChangesOf(
      `${INSERT} ${rows.map(() => ROW).join(", ")}`,
      ...rows.flatMap((row) => EVENT_COLUMNS.map((column) => row[column])),
    );
  });
}
