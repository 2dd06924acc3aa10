import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { PrismaClient as PostgresPrismaClient } from "@/lib/generated/prisma-pg/client";
import { config } from "@/lib/config";
import { databaseFile, isPostgres } from "@/lib/config/database";

export type Tx = Omit<PrismaClient, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;

const globalForDb = globalThis as unknown as { agentWalletDb?: PrismaClient };

function connect(): PrismaClient {
  const { databaseUrl } = config();
  if (isPostgres(databaseUrl)) {
    // The PostgreSQL client is generated from the same models (prisma/postgresql/schema.prisma),
    // so its model API is the SQLite client's; callers see one type, the portable one.
    const client = new PostgresPrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
    return client as unknown as PrismaClient;
  }
  const adapter = new PrismaBetterSQLite3({ url: databaseFile({ DATABASE_URL: databaseUrl }), timeout: 10_000 });
  return new PrismaClient({ adapter });
}

/** Whether the configured database is PostgreSQL (several instances may share it). */
export function usesPostgres(): boolean {
  return isPostgres(config().databaseUrl);
}

/** The process's one database client (kept on globalThis across dev reloads). */
export function db(): PrismaClient {
  globalForDb.agentWalletDb ??= connect();
  return globalForDb.agentWalletDb;
}
