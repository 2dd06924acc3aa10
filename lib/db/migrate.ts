import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { databaseFile, isPostgres } from "@/lib/config/database";

const require = createRequire(import.meta.url);
// The project's folder, as npm runs every script from it: this module also runs bundled into npm start's launcher
// (node_modules/.cache/agent-wallet/start.mjs), where a path relative to the module's own file points elsewhere.
const root = process.cwd();

/**
 * Creates the database if needed and applies every pending migration.
 * SQLite: `prisma migrate deploy` with the JavaScript schema engine.
 * PostgreSQL: prisma/postgresql/migrations through lib/db/postgres-migrations.ts
 * (safe when several instances start at once; docs/decisions/0004-postgresql.md).
 * The PostgreSQL database itself must exist; its schema may be empty.
 */
export function migrateDatabase(databaseUrl: string): void {
  const env = { ...process.env, DATABASE_URL: databaseUrl };
  let result;
  if (isPostgres(databaseUrl)) {
    const tsx = pathToFileURL(require.resolve("tsx")).href;
    result = spawnSync(process.execPath, ["--import", tsx, path.join(root, "lib", "db", "postgres-migrations.ts")], {
      env,
      encoding: "utf8",
    });
  } else {
    const file = databaseFile({ DATABASE_URL: databaseUrl });
    fs.mkdirSync(path.dirname(file), { recursive: true });
    // WAL lets the app and other readers (the CLI, tests) work on one file at once.
    const sqlite = new Database(file);
    sqlite.pragma("journal_mode = WAL");
    sqlite.close();
    result = spawnSync(process.execPath, [path.join(root, "scripts", "prisma.mjs"), "migrate", "deploy"], { env, encoding: "utf8" });
  }
  if (result.status !== 0) {
    throw new Error(`Database migration failed:\n${result.stdout}\n${result.stderr}`);
  }
}
