// A fresh, migrated SQLite database for tests that call lib/ in-process without
// starting the app: its own temporary DATA_DIR, and this process's environment
// pointed at it. Call it before importing anything that reads config() or db()
// (import those dynamically afterwards): both are read once per process.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { migrateDatabase } from "@/lib/db/migrate";

export type TestDatabase = {
  dataDir: string;
  databaseUrl: string;
  appUrl: string;
  /** closes the database connections and deletes the data folder */
  cleanup: () => Promise<void>;
};

export async function useTestDatabase(options: { appUrl?: string; env?: Record<string, string> } = {}): Promise<TestDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aw-db-"));
  const databaseUrl = `file:${path.join(dataDir, "agent-wallet.db")}`;
  const appUrl = options.appUrl ?? "http://localhost:3999";
  Object.assign(process.env, {
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    APP_URL: appUrl,
    BASE_URL: appUrl,
    NEXTAUTH_URL: appUrl,
    ...options.env,
  });
  migrateDatabase(databaseUrl);
  return {
    dataDir,
    databaseUrl,
    appUrl,
    cleanup: async () => {
      const { disconnectDatabase } = await import("@/lib/db");
      await disconnectDatabase();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
