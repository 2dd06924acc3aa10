// Write transactions past the ORM for the hot write paths (decision 0012): a request's creation, a refresh token's
// rotation, a code's exchange. Prisma compiled each of their queries in WebAssembly on every call and ran its
// interactive transaction across awaits: most of their CPU time (docs/performance.md).
//
// A transaction is a script: a generator that yields each statement and receives its result, so the same code runs
// synchronously on SQLite (from BEGIN IMMEDIATE to COMMIT in one call on the audit append's connection, which no
// other code of the process can enter meanwhile) and asynchronously on PostgreSQL (one pooled client, BEGIN to
// COMMIT).
import type Database from "better-sqlite3";
import type pg from "pg";
import { directWriter, EXCLUSIVE_LOCK, type Tx } from "./index";
import { numberedPlaceholders, sqliteDateTime } from "./prepared";

export type Parameter = string | number | Date | null;

/** One statement, with `?` placeholders: `rows` for what it returns, else how many rows it changed. */
type Statement = { sql: string; params: Parameter[]; returns: "rows" | "changes" };

/** A transaction's statements, in order; each `yield*` of rowsOf or changesOf is one statement. */
export type TransactionScript<T> = Generator<Statement, T, unknown>;

/** The rows a statement returns (a SELECT, or a write with RETURNING). */
export function* rowsOf<Row>(sql: string, ...params: Parameter[]): Generator<Statement, Row[], unknown> {
  return (yield { sql, params, returns: "rows" }) as Row[];
}

/** How many rows a write changed. */
export function* changesOf(sql: string, ...params: Parameter[]): Generator<Statement, number, unknown> {
  return (yield { sql, params, returns: "changes" }) as number;
}

/**
 * Holds `lock` until the transaction ends, as exclusiveTransaction does (a script holding it and a Prisma transaction
 * holding it never interleave): an advisory lock on PostgreSQL; on SQLite the transaction holds the database's write
 * lock from its start already.
 */
export function* heldLock(lock: string): TransactionScript<void> {
  if (directWriter().kind === "postgres") {
    yield* rowsOf(`SELECT 1 AS locked FROM (SELECT pg_advisory_xact_lock(?, hashtext(?))) AS held`, EXCLUSIVE_LOCK, lock);
  }
}

/** How long a write past the ORM may wait for SQLite's write lock before it fails, as Prisma's transactions did. */
const LOCK_WAIT_MS = 20_000;

/**
 * Runs `write`, a synchronous transaction on the connection that writes past the ORM (which never waits for the
 * lock), until it finds SQLite's write lock free: when another connection holds it (Prisma's across an await, or
 * another process's) it is tried again a few milliseconds later, for up to 20 s, never waiting synchronously.
 */
export async function whenSqliteLockFree<T>(write: () => T): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      return write();
    } catch (error) {
      if ((error as { code?: string }).code !== "SQLITE_BUSY" || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(1 + attempt, 20)));
    }
  }
}

/**
 * Runs `script` in one transaction: all its statements commit, or (when it throws) none. On SQLite the transaction
 * holds the database's write lock from its start (BEGIN IMMEDIATE), so what it reads no other writer changes before
 * it commits (whenSqliteLockFree waits for the lock, as the audit append does). On PostgreSQL it runs at READ
 * COMMITTED, as Prisma's transactions do: the script takes the locks it needs.
 */
export async function runTransaction<T>(script: () => TransactionScript<T>): Promise<T> {
  const writer = directWriter();
  if (writer.kind === "postgres") return onPostgres(writer.scripts, script);
  return whenSqliteLockFree(() => onSqlite(writer.connection(), script));
}

const sqliteStatements = new WeakMap<Database.Database, Map<string, Database.Statement>>();
const sqliteTransactions = new WeakMap<Database.Database, Database.Transaction<(run: () => unknown) => unknown>>();

function onSqlite<T>(connection: Database.Database, script: () => TransactionScript<T>): T {
  let statements = sqliteStatements.get(connection);
  if (!statements) sqliteStatements.set(connection, (statements = new Map()));
  let transaction = sqliteTransactions.get(connection);
  if (!transaction) sqliteTransactions.set(connection, (transaction = connection.transaction((run: () => unknown) => run())));
  const prepared = statements;
  const execute = ({ sql, params, returns }: Statement) => {
    let statement = prepared.get(sql);
    if (!statement) prepared.set(sql, (statement = connection.prepare(sql)));
    const values = params.map((value) => (value instanceof Date ? sqliteDateTime(value) : value));
    return returns === "rows" ? statement.all(...values) : statement.run(...values).changes;
  };
  return transaction.immediate(() => {
    const steps = script();
    for (let step = steps.next(); ;) {
      if (step.done) return step.value;
      step = steps.next(execute(step.value));
    }
  }) as T;
}

// Timestamps in UTC, as Prisma stores them: a timestamp column ignores the zone an ISO string names.
const postgresValue = (value: Parameter) => (value instanceof Date ? value.toISOString() : value);

/**
 * One statement that returns rows, on the scripts' pool with no BEGIN … COMMIT around it: a single statement is
 * atomic on its own, and on PostgreSQL each statement of a transaction is a round trip.
 */
export async function postgresStatement<Row>(pool: pg.Pool, sql: string, params: Parameter[]): Promise<Row[]> {
  return (await pool.query(numberedPlaceholders(sql), params.map(postgresValue))).rows as Row[];
}

async function onPostgres<T>(pool: pg.Pool, script: () => TransactionScript<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const query = async (sql: string, values: unknown[] = []) => {
    try {
      return await client.query(sql, values);
    } catch (error) {
      broken = error as Error;
      throw error;
    }
  };
  try {
    await query("BEGIN");
    const steps = script();
    let step = steps.next();
    while (!step.done) {
      const { sql, params, returns } = step.value;
      const result = await query(numberedPlaceholders(sql), params.map(postgresValue));
      step = steps.next(returns === "rows" ? result.rows : (result.rowCount ?? 0));
    }
    await query("COMMIT");
    return step.value;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    // A script that refused (a domain error) hands its connection back; one whose query failed closes it (PostgreSQL
    // restarting, say) rather than handing it to the next caller.
    client.release(broken);
  }
}

/** Runs a script's statements in a Prisma transaction that is already open (for code still written against the ORM). */
export async function runInPrismaTransaction<T>(tx: Tx, script: TransactionScript<T>): Promise<T> {
  const postgres = directWriter().kind === "postgres";
  let step = script.next();
  while (!step.done) {
    const { sql, params, returns } = step.value;
    const text = postgres ? numberedPlaceholders(sql) : sql;
    step = script.next(returns === "rows" ? await tx.$queryRawUnsafe(text, ...params) : await tx.$executeRawUnsafe(text, ...params));
  }
  return step.value;
}
