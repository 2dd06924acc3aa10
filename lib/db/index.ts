import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { config } from "@/lib/config";
import { databaseFile } from "@/lib/config/database";

export type Db = PrismaClient;
export type Tx = Omit<PrismaClient, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;

const globalForDb = globalThis as unknown as { agentWalletDb?: PrismaClient };

function connect(): PrismaClient {
  const { databaseUrl } = config();
  const adapter = new PrismaBetterSQLite3({ url: databaseFile({ DATABASE_URL: databaseUrl }), timeout: 10_000 });
  return new PrismaClient({ adapter });
}

/** The process's one database client (kept on globalThis across dev reloads). */
export function db(): PrismaClient {
  globalForDb.agentWalletDb ??= connect();
  return globalForDb.agentWalletDb;
}
