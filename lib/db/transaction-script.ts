// Write transactions past the ORM for the hot write paths (decision 0012): a request's creation and approval, a
// refresh token's rotation, a code's exchange, the audit append. Prisma compiled each of their queries in WebAssembly
// on every call and ran its interactive transaction across awaits: most of their CPU time (docs/performance.md).
//
// A transaction is a script: a generator that yields each statement and receives its result, so the same code runs
// synchronously on SQLite (from BEGIN IMMEDIATE to COMMIT in one call on the audit append's connection, which no
// other code of the process can enter meanwhile) and asynchronously on PostgreSQL (one pooled client, BEGIN to
// COMMIT). On PostgreSQL every round trip costs the server a socket write and read, which outweighed the statements'
// own work, so the script says which answers it waits for: statements it does not wait for (a lock, a row it
// requires) go out with the next one it does, BEGIN with the first, and COMMIT with the last (decision 0020); a
// required row is judged by PostgreSQL itself, so nothing the script left unanswered holds COMMIT back.
import type Database from "better-sqlite3";
import pg from "pg";
import { directWriter, EXCLUSIVE_LOCK, type Tx } from "./index";
import { numberedPlaceholders, sqliteDateTime } from "./prepared";

export type Parameter = string | number | Date | null;

/** What a statement answered: its rows (a SELECT, or a write with RETURNING) and how many rows it changed. */
export type Answer<Row = unknown> = { rows: Row[]; changes: number };

/**
 * One statement, with `?` placeholders. `reads`: it returns rows (a SELECT, or a write with RETURNING). `waits`: the
 * script needs its answer before it goes on; otherwise its answer goes to `answered`, or is ignored. `refusal`: the
 * statement must return a row, or the transaction is refused with this error. `last`: the script's last statement.
 */
type Statement = {
  sql: string;
  params: Parameter[];
  reads: boolean;
  waits: boolean;
  answered?: (answer: Answer) => void;
  refusal?: () => Error;
  last?: boolean;
};

/** A transaction's statements, in order; each `yield*` of the helpers below is one statement. */
export type TransactionScript<T> = Generator<Statement, T, unknown>;

/** The rows a statement returns (a SELECT, or a write with RETURNING). */
export function* rowsOf<Row>(sql: string, ...params: Parameter[]): Generator<Statement, Row[], unknown> {
  return ((yield { sql, params, reads: true, waits: true }) as Answer<Row>).rows;
}

/** How many rows a write changed. */
export function* changesOf(sql: string, ...params: Parameter[]): Generator<Statement, number, unknown> {
  return ((yield { sql, params, reads: false, waits: true }) as Answer).changes;
}

/**
 * A statement whose answer the script does not wait for (a lock): it runs, in order, before the next one the script
 * waits for, and an error it raises still rolls the transaction back.
 */
export function* unanswered(sql: string, ...params: Parameter[]): Generator<Statement, void, unknown> {
  yield { sql, params, reads: false, waits: false };
}

/**
 * A write whose answer the script does not wait for: it runs, in order, before the next statement the script waits for
 * (on PostgreSQL in the same round trip), and `changed()` says how many rows it changed once it has run.
 */
export function* changesLater(sql: string, ...params: Parameter[]): Generator<Statement, () => number, unknown> {
  let changes = 0;
  yield { sql, params, reads: false, waits: false, answered: (answer) => (changes = answer.changes) };
  return () => changes;
}

/**
 * The rows of a statement the script does not wait for: it runs, in order, before the next statement the script waits
 * for (on PostgreSQL in the same round trip), and `rows()` gives them once it has run.
 */
export function* rowsLater<Row>(sql: string, ...params: Parameter[]): Generator<Statement, () => Row[], unknown> {
  let rows: Row[] = [];
  yield { sql, params, reads: true, waits: false, answered: (answer) => (rows = answer.rows as Row[]) };
  return () => rows;
}

/**
 * A statement that must return a row (a SELECT, or a write with RETURNING), which the script does not wait for: when it
 * returns none, the transaction is refused with `refusal()` and rolled back, the statements before and after it
 * included. On PostgreSQL the database judges it (refuse_unless, prisma/postgresql/migrations/0014_required_rows), so
 * the transaction can still commit in the round trip that carries it.
 */
export function* required(refusal: () => Error, sql: string, ...params: Parameter[]): Generator<Statement, void, unknown> {
  yield { sql, params, reads: true, waits: false, refusal };
}

/**
 * A statement of `answersOf`: `reads`, it returns rows; otherwise its answer is how many rows it changed. `refusal`:
 * it must return a row, as `required`'s does (`requiring`).
 */
export type Query = { sql: string; params: Parameter[]; reads: boolean; refusal?: () => Error };

/** `queries`, each a statement whose answer the script does not wait for (unanswered, or required). */
export function* unansweredAll(queries: Query[]): Generator<Statement, void, unknown> {
  for (const { sql, params, refusal } of queries) yield* refusal ? required(refusal, sql, ...params) : unanswered(sql, ...params);
}

export const reading = (sql: string, ...params: Parameter[]): Query => ({ sql, params, reads: true });
export const writing = (sql: string, ...params: Parameter[]): Query => ({ sql, params, reads: false });
/** A statement that must return a row (a write with RETURNING, say), or the transaction is refused with `refusal()`. */
export const requiring = (refusal: () => Error, sql: string, ...params: Parameter[]): Query => ({ sql, params, reads: true, refusal });

/**
 * The answers of several statements sent in one round trip, in order. `last`: they end the script, and the
 * transaction commits with them.
 */
export function* answersOf(queries: Query[], { last = false } = {}): Generator<Statement, Answer[], unknown> {
  const answers: Answer[] = [];
  for (const query of queries.slice(0, -1)) yield { ...query, waits: false, answered: (answer) => answers.push(answer) };
  answers.push((yield { ...queries[queries.length - 1], waits: true, last }) as Answer);
  return answers;
}

/**
 * How many rows the script's last statement changed: the transaction commits with it (on PostgreSQL in the same
 * round trip), so what follows it in the script must neither run a statement nor throw.
 */
export function* lastChangesOf(sql: string, ...params: Parameter[]): Generator<Statement, number, unknown> {
  return ((yield { sql, params, reads: false, waits: true, last: true }) as Answer).changes;
}

const afterLast = () => new Error("A transaction script ran a statement after its last one");

/**
 * Holds `lock` until the transaction ends, as exclusiveTransaction does (a script holding it and a Prisma transaction
 * holding it never interleave): an advisory lock on PostgreSQL; on SQLite the transaction holds the database's write
 * lock from its start already.
 */
export function* heldLock(lock: string): TransactionScript<void> {
  if (directWriter().kind === "postgres") {
    yield* unanswered(`SELECT pg_advisory_xact_lock(?, hashtext(?))`, EXCLUSIVE_LOCK, lock);
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

/** Writes `queries` in one transaction: one commit, and on PostgreSQL one round trip. */
export async function writeTogether(queries: Query[]): Promise<void> {
  await runTransaction(() => answersOf(queries, { last: true }));
}

const sqliteStatements = new WeakMap<Database.Database, Map<string, Database.Statement>>();
const sqliteTransactions = new WeakMap<Database.Database, Database.Transaction<(run: () => unknown) => unknown>>();

function onSqlite<T>(connection: Database.Database, script: () => TransactionScript<T>): T {
  let statements = sqliteStatements.get(connection);
  if (!statements) sqliteStatements.set(connection, (statements = new Map()));
  let transaction = sqliteTransactions.get(connection);
  if (!transaction) sqliteTransactions.set(connection, (transaction = connection.transaction((run: () => unknown) => run())));
  const prepared = statements;
  const execute = ({ sql, params, reads }: Statement): Answer => {
    let statement = prepared.get(sql);
    if (!statement) prepared.set(sql, (statement = connection.prepare(sql)));
    const values = params.map((value) => (value instanceof Date ? sqliteDateTime(value) : value));
    if (!reads) return { rows: [], changes: statement.run(...values).changes };
    const rows = statement.all(...values);
    return { rows, changes: rows.length };
  };
  return transaction.immediate(() => runScript(script(), execute)) as T;
}

/** Runs a script's statements one at a time with `execute` (SQLite, or a Prisma transaction), as PostgreSQL would. */
function runScript<T>(steps: TransactionScript<T>, execute: (statement: Statement) => Answer): T;
function runScript<T>(steps: TransactionScript<T>, execute: (statement: Statement) => Promise<Answer>): Promise<T>;
function runScript<T>(steps: TransactionScript<T>, execute: (statement: Statement) => Answer | Promise<Answer>): T | Promise<T> {
  let ended = false;
  const next = (step: IteratorResult<Statement, T>): T | Promise<T> => {
    for (;;) {
      if (step.done) return step.value;
      if (ended) throw afterLast();
      const statement = step.value;
      ended = statement.last === true;
      const answer = execute(statement);
      if (answer instanceof Promise) return answer.then((resolved) => next(steps.next(settled(statement, resolved))));
      step = steps.next(settled(statement, answer));
    }
  };
  return next(steps.next());
}

/** The answer the script receives, once a required row is found. */
function settled(statement: Statement, answer: Answer): Answer | undefined {
  if (statement.refusal && !answer.rows.length) throw statement.refusal();
  statement.answered?.(answer);
  return statement.waits ? answer : undefined;
}

/**
 * Runs `script` on one of `pool`'s clients, BEGIN to COMMIT, each round trip one simple query of several statements:
 * those the script did not wait for, then the one it waits for (with BEGIN before the first and COMMIT after the
 * last). Their parameters are written into the text as quoted literals, which PostgreSQL types from their context as
 * it types a parameter sent apart.
 */
export async function onPostgres<T>(pool: pg.Pool, script: () => TransactionScript<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  /** Sends `statements` (and COMMIT after them when `commits`) in one round trip; hands their answers on. */
  const send = async (statements: Statement[], commits: boolean): Promise<Answer[]> => {
    const texts = statements.map(({ sql, params, refusal }, index) =>
      refusal ? requiredRow(withLiterals(sql, params), index) : withLiterals(sql, params),
    );
    let results;
    try {
      results = await client.query([...texts, ...(commits ? ["COMMIT"] : [])].join(";\n"));
    } catch (error) {
      const refused = refusedBy(error, statements);
      if (refused) throw refused();
      broken = error as Error;
      throw error;
    }
    const answers = (Array.isArray(results) ? results : [results]).map((result) => ({ rows: result.rows, changes: result.rowCount ?? 0 }));
    statements.forEach((statement, index) => statement.answered?.(answers[index]));
    return answers;
  };
  let pending: Statement[] = [BEGIN];
  let committed = false;
  try {
    const steps = script();
    for (let step = steps.next(); ;) {
      if (step.done) {
        if (!committed) await send(pending, true);
        return step.value;
      }
      if (committed) throw afterLast();
      const statement = step.value;
      pending.push(statement);
      if (!statement.waits) {
        step = steps.next();
        continue;
      }
      const answer = (await send(pending, statement.last === true))[pending.length - 1];
      committed = statement.last === true;
      pending = [];
      step = steps.next(answer);
    }
  } catch (error) {
    if (!committed) await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    // A script that refused (a domain error, or a required row missing) hands its connection back; one whose query
    // failed closes it (PostgreSQL restarting, say) rather than handing it to the next caller.
    client.release(broken);
  }
}

/** What refuse_unless raises (prisma/postgresql/migrations/0014_required_rows), the statement's index as its detail. */
const REQUIRED_ROW_MISSING = "AWR01";

/** A required statement (`text`, the `index`th of its round trip) that raises when it returns no row. */
const requiredRow = (text: string, index: number) =>
  `WITH "required" AS (${text}) SELECT "refuse_unless"((SELECT count(*) FROM "required") > 0, ${index})`;

/** The refusal of the required statement whose row was missing, when that is what `error` says. */
function refusedBy(error: unknown, statements: Statement[]): (() => Error) | undefined {
  const { code, detail } = error as { code?: string; detail?: string };
  return code === REQUIRED_ROW_MISSING ? statements[Number(detail)]?.refusal : undefined;
}

const BEGIN: Statement = { sql: "BEGIN", params: [], reads: false, waits: false };

/**
 * `sql` with each `?` replaced by its parameter as a quoted literal (NULL for null): an untyped literal, as an
 * untyped parameter, takes its type from where it stands. A string PostgreSQL cannot hold (a NUL) is refused, as a
 * parameter would be.
 */
export function withLiterals(sql: string, params: Parameter[]): string {
  let index = 0;
  const text = sql.replace(/\?/g, () => {
    if (index >= params.length) throw new Error(`More placeholders than parameters in: ${sql}`);
    const value = params[index++];
    if (value === null) return "NULL";
    if (typeof value === "number" && !Number.isFinite(value)) throw new Error(`Not a finite number: ${value}`);
    const literal = value instanceof Date ? value.toISOString() : String(value);
    if (literal.includes("\0")) throw new Error("A string parameter holds a NUL character, which PostgreSQL cannot store");
    // pg's escapeLiteral rebuilds the string a character at a time; one with no quote and no backslash it only quotes.
    return /['\\]/.test(literal) ? pg.escapeLiteral(literal) : `'${literal}'`;
  });
  if (index !== params.length) throw new Error(`Fewer placeholders than parameters in: ${sql}`);
  return text;
}

/** Runs a script's statements in a Prisma transaction that is already open (for code still written against the ORM). */
export function runInPrismaTransaction<T>(tx: Tx, script: TransactionScript<T>): Promise<T> {
  const postgres = directWriter().kind === "postgres";
  return runScript(script, async ({ sql, params, reads }) => {
    const text = postgres ? numberedPlaceholders(sql) : sql;
    if (!reads) return { rows: [], changes: await tx.$executeRawUnsafe(text, ...params) };
    const rows = await tx.$queryRawUnsafe<unknown[]>(text, ...params);
    return { rows, changes: rows.length };
  });
}
