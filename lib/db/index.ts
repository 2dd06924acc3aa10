import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { PrismaClient as PostgresPrismaClient } from "@/lib/generated/prisma-pg/client";
import { config } from "@/lib/config";
import { databaseFile, isPostgres } from "@/lib/config/database";
import type Database from "better-sqlite3";
import pg from "pg";
import {
  postgresSelects,
  postgresStatement,
  sqliteDateTime,
  sqliteSelects,
  sqliteWriter,
  type PreparedSelect,
  type SelectConnection,
} from "./prepared";
import { serializedSqlite } from "./serialized-sqlite";

export type Tx = Omit<PrismaClient, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;

/**
 * Where writes past the ORM go (the audit append, rate-limit reports): on SQLite a connection of its own, opened on
 * first use; on PostgreSQL the pool Prisma uses.
 */
export type DirectWriter =
  | { kind: "sqlite"; connection: () => Database.Database }
  | {
      kind: "postgres";
      pool: pg.Pool;
      /**
       * The transaction scripts' own pool (lib/db/transaction-script.ts): 50 exchanges of one code each hold a
       * connection while the winner's row lock blocks them, and on Prisma's pool they starved its transactions (the
       * replays' revocations), which give up after 2 s without a connection.
       */
      scripts: pg.Pool;
    };

type Connections = { prisma: PrismaClient; selects: SelectConnection; writer: DirectWriter; close: () => void };

const globalForDb = globalThis as unknown as { agentWalletDb?: Connections };

function connect(): Connections {
  const { databaseUrl } = config();
  if (isPostgres(databaseUrl)) {
    const pool = new pg.Pool({ connectionString: databaseUrl });
    // A pooled connection that PostgreSQL drops (a restart) is discarded by the pool, and the next query opens
    // another; without a listener the event would end the process.
    pool.on("error", () => {});
    // The PostgreSQL client is generated from the same models (prisma/postgresql/schema.prisma),
    // so its model API is the SQLite client's; callers see one type, the portable one.
    const prisma = new PostgresPrismaClient({ adapter: new PrismaPg(pool) }) as unknown as PrismaClient;
    const scripts = new pg.Pool({ connectionString: databaseUrl });
    scripts.on("error", () => {});
    return {
      prisma,
      selects: postgresSelects(pool),
      writer: { kind: "postgres", pool, scripts },
      close: () => void scripts.end().catch(() => {}),
    };
  }
  const file = databaseFile({ DATABASE_URL: databaseUrl });
  const prisma = new PrismaClient({ adapter: serializedSqlite(new PrismaBetterSQLite3({ url: file, timeout: 10_000 })) });
  const writer = sqliteWriter(file);
  return { prisma, selects: sqliteSelects(file), writer: { kind: "sqlite", connection: writer.open }, close: writer.close };
}

function connections(): Connections {
  globalForDb.agentWalletDb ??= connect();
  return globalForDb.agentWalletDb;
}

/** Whether the configured database is PostgreSQL (several instances may share it). */
export function usesPostgres(): boolean {
  return isPostgres(config().databaseUrl);
}

/** The process's one database client (kept on globalThis across dev reloads). */
export function db(): PrismaClient {
  return connections().prisma;
}

/** Any constant: the namespace of exclusiveTransaction's advisory locks on PostgreSQL. */
export const EXCLUSIVE_LOCK = 7_100_425;

/**
 * Runs `work` in one transaction that holds `lock` (any string) from its start to its commit, so two holders of
 * one lock never interleave, across processes and instances: an advisory lock on PostgreSQL; on SQLite the
 * database's single write lock, taken before anything is read (a transaction that lost the race for its snapshot
 * anyway is retried from the start).
 */
export async function exclusiveTransaction<T>(lock: string, work: (tx: Tx) => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await db().$transaction(
        async (tx) => {
          if (usesPostgres())
            await tx.$queryRaw`SELECT 1 AS locked FROM (SELECT pg_advisory_xact_lock(${EXCLUSIVE_LOCK}, hashtext(${lock}))) AS held`;
          // A write that changes nothing still takes SQLite's write lock.
          else await tx.$executeRaw`UPDATE "AgentRequest" SET "id" = "id" WHERE 0`;
          return work(tx);
        },
        { maxWait: 10_000, timeout: 20_000 },
      );
    } catch (error) {
      if ((error as { code?: string }).code !== "SQLITE_BUSY_SNAPSHOT" || attempt >= 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * (attempt + 1)));
    }
  }
}

/** Rows of a hot-path SELECT, prepared once (lib/db/prepared.ts). */
export function selectRows<Row>(statement: PreparedSelect<Row>, ...params: (string | number)[]): Promise<Row[]> {
  return connections().selects.select(statement, params);
}

/** The audit append's connection, past the ORM. */
export function directWriter(): DirectWriter {
  return connections().writer;
}

type QueryParameter = string | number | Date | null;

/** Each SQLite writer connection's statements, prepared once. */
const preparedWrites = new WeakMap<Database.Database, Map<string, Database.Statement>>();

/**
 * One statement that returns rows (a SELECT, or a write with RETURNING), written with `?` placeholders, where
 * Prisma's pipeline costs several times the statement (the rate-limit store, which /mcp writes to every 25th call).
 * On SQLite it runs synchronously on the audit append's connection, which never waits for the write lock; when
 * another connection holds it (Prisma's, across an await, or another process), the statement goes through Prisma,
 * which waits. On PostgreSQL it is one statement on the transaction scripts' pool.
 */
export async function queryPastOrm<Row>(sql: string, params: QueryParameter[]): Promise<Row[]> {
  const writer = connections().writer;
  if (writer.kind === "sqlite") {
    const connection = writer.connection();
    let statements = preparedWrites.get(connection);
    if (!statements) preparedWrites.set(connection, (statements = new Map()));
    let statement = statements.get(sql);
    if (!statement) statements.set(sql, (statement = connection.prepare(sql)));
    try {
      return statement.all(...params.map((value) => (value instanceof Date ? sqliteDateTime(value) : value))) as Row[];
    } catch (error) {
      if ((error as { code?: string }).code !== "SQLITE_BUSY") throw error;
    }
  }
  if (writer.kind === "postgres") return postgresStatement<Row>(writer.scripts, sql, params);
  return db().$queryRawUnsafe<Row[]>(sql, ...params);
}

/** Closes every connection of the process; the next use opens new ones. */
export async function disconnectDatabase(): Promise<void> {
  const open = globalForDb.agentWalletDb;
  if (!open) return;
  globalForDb.agentWalletDb = undefined;
  await open.prisma.$disconnect();
  open.close();
  await open.selects.close();
}
