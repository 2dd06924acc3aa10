import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { databaseFile, isPostgres } from "@/lib/config/database";

/**
 * Creates the database if needed and applies every pending migration
 * (`prisma migrate deploy` with the JavaScript schema engine).
 */
export function migrateDatabase(databaseUrl: string): void {
  if (!isPostgres(databaseUrl)) {
    const file = databaseFile({ DATABASE_URL: databaseUrl });
    fs.mkdirSync(path.dirname(file), { recursive: true });
    // WAL lets the app and other readers (the CLI, tests) work on one file at once.
    const sqlite = new Database(file);
    sqlite.pragma("journal_mode = WAL");
    sqlite.close();
  }
  const result = spawnSync(process.execPath, [path.resolve("scripts/prisma.mjs"), "migrate", "deploy"], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: "utf8",
  });
  if (result.status !== 0) {
    throw new Error(`Database migration failed:\n${result.stdout}\n${result.stderr}`);
  }
}
