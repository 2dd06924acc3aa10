import Database from "better-sqlite3";
import pg from "pg";

/**
 * SQL written past the ORM uses `?` placeholders, as SQLite takes them; PostgreSQL takes `$1, $2, …` in the same
 * order.
 */
export function numberedPlaceholders(sql: string): string {
  let index = 0;
  return sql.replace(/\?/g, () => `$${++index}`);
}

/**
 * A fixed SELECT that the /mcp hot path runs on every call, written once with `?` placeholders. It runs past the
 * ORM as a statement prepared once per connection: Prisma compiles a raw query and prepares its statement again
 * on every call, which was a third of a read call's CPU time and allocations (docs/performance.md). Writes stay
 * in Prisma, in its transactions, except the audit append (sqliteWriter below).
 */
export class PreparedSelect<Row> {
  readonly postgresText: string;

  constructor(
    /** the statement's name on each PostgreSQL connection */
    readonly name: string,
    readonly sql: string,
  ) {
    this.postgresText = numberedPlaceholders(sql);
  }

  /** Never called: it carries the row type to `select`. */
  declare readonly row: Row;
}

type Parameter = string | number;

/** PostgreSQL's type for a timestamp without time zone, which is how Prisma's DateTime columns are stored (in UTC). */
const TIMESTAMP_OID = 1114;

/** pg's parsers, but a timestamp read as the UTC it holds (pg reads it in the process's time zone). */
const UTC_TIMESTAMPS = {
  getTypeParser: (oid: number, format?: "text" | "binary") =>
    oid === TIMESTAMP_OID && format !== "binary"
      ? (text: string) => new Date(`${text.replace(" ", "T")}Z`)
      : pg.types.getTypeParser(oid, format),
};

/**
 * One statement that returns rows, on `pool` with no BEGIN … COMMIT around it (a single statement is atomic on its
 * own). Times go and come in UTC, as Prisma stores them: a timestamp column ignores the zone an ISO string names.
 */
export async function postgresStatement<Row>(pool: pg.Pool, sql: string, params: (Parameter | Date | null)[]): Promise<Row[]> {
  const values = params.map((value) => (value instanceof Date ? value.toISOString() : value));
  return (await pool.query({ text: numberedPlaceholders(sql), values, types: UTC_TIMESTAMPS })).rows as Row[];
}

/** Runs prepared selects on the configured database. */
export type SelectConnection = {
  select<Row>(statement: PreparedSelect<Row>, params: Parameter[]): Promise<Row[]>;
  close(): Promise<void>;
};

/**
 * SQLite: a connection of its own that only reads (WAL lets it read beside Prisma's writing connection, and each
 * read sees every committed write), with each statement prepared once. A WAL reader takes no lock a writer holds,
 * so its synchronous busy wait (short, in case) cannot stall the event loop behind Prisma's open transaction.
 */
export function sqliteSelects(file: string): SelectConnection {
  let connection: Database.Database | undefined;
  const prepared = new Map<string, Database.Statement>();
  function open(): Database.Database {
    if (connection) return connection;
    connection = new Database(file, { fileMustExist: true, timeout: 1_000 });
    connection.pragma("query_only = ON");
    return connection;
  }
  return {
    async select<Row>(statement: PreparedSelect<Row>, params: Parameter[]): Promise<Row[]> {
      let compiled = prepared.get(statement.name);
      if (!compiled) prepared.set(statement.name, (compiled = open().prepare(statement.sql)));
      return compiled.all(...params) as Row[];
    },
    async close() {
      connection?.close();
    },
  };
}

/**
 * SQLite: the connection that writes past the ORM (the audit append, rate-limit reports). It never waits for the
 * write lock (busy timeout 0): its transactions run synchronously from BEGIN IMMEDIATE to COMMIT, so no other
 * connection of this process can find the lock taken by it, and when Prisma's connection holds the lock across an
 * await a write fails at once with SQLITE_BUSY and is tried again later (or through Prisma). A busy wait here would
 * block the event loop that Prisma's transaction needs to finish (decision 0011). synchronous=NORMAL: in WAL mode a
 * commit is durable once the operating system has it, so a crashed process loses nothing; only a power cut can
 * lose the last commits.
 */
export function sqliteWriter(file: string): { open: () => Database.Database; close: () => void } {
  let connection: Database.Database | undefined;
  return {
    open() {
      if (connection) return connection;
      connection = new Database(file, { fileMustExist: true, timeout: 0 });
      connection.pragma("synchronous = NORMAL");
      return connection;
    },
    close() {
      connection?.close();
      connection = undefined;
    },
  };
}

/** A DateTime as Prisma's SQLite adapter stores it, so the ORM reads rows written past it as it wrote its own. */
export function sqliteDateTime(at: Date): string {
  return at.toISOString().replace("Z", "+00:00");
}

/**
 * A DateTime column read past the ORM, as the ORM reads it: SQLite gives the text Prisma wrote (sqliteDateTime); pg
 * reads PostgreSQL's timestamp without time zone, which holds UTC, as the process's local time, which is undone.
 */
export function storedTime(value: Date | string): Date {
  if (typeof value === "string") return new Date(value);
  return new Date(
    Date.UTC(
      value.getFullYear(),
      value.getMonth(),
      value.getDate(),
      value.getHours(),
      value.getMinutes(),
      value.getSeconds(),
      value.getMilliseconds(),
    ),
  );
}

/** PostgreSQL: on the pool Prisma uses, as named statements, which each connection prepares on first use. */
export function postgresSelects(pool: pg.Pool): SelectConnection {
  return {
    async select<Row>(statement: PreparedSelect<Row>, params: Parameter[]): Promise<Row[]> {
      const result = await pool.query({ name: statement.name, text: statement.postgresText, values: params });
      return result.rows as Row[];
    },
    close: () => pool.end(),
  };
}
