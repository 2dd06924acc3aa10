// Applies prisma/postgresql/migrations/*/migration.sql to a PostgreSQL database,
// in name order, each exactly once (docs/decisions/0004-postgresql.md).
//
// `prisma migrate deploy` cannot run here: the JavaScript schema engine reads
// PostgreSQL's `name` column type, which @prisma/adapter-pg 6.19 cannot
// deserialize. The migrations are still authored by Prisma (`migrate diff`);
// only applying them is ours:
// - a session advisory lock serializes every instance that starts at once: the
//   others wait, then find the migrations recorded and apply nothing;
// - each migration runs in its own transaction together with its row in
//   `_migrations`, so it is applied completely or not at all;
// - the SHA-256 of every applied file is kept: an applied migration that was
//   edited afterwards stops the start instead of drifting silently.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";

export const POSTGRES_MIGRATIONS_DIR = fileURLToPath(new URL("../../prisma/postgresql/migrations", import.meta.url));

/** Any constant shared by every instance: pg_advisory_lock's key for "migrating". */
const MIGRATION_LOCK_KEY = "7308473202471823001";

export type PostgresMigration = { name: string; sql: string; checksum: string };

export function readPostgresMigrations(dir: string = POSTGRES_MIGRATIONS_DIR): PostgresMigration[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(dir, entry.name, "migration.sql")))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = fs.readFileSync(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

/** Applies every pending migration; returns the names it applied (none when up to date). */
export async function migratePostgres(databaseUrl: string, dir: string = POSTGRES_MIGRATIONS_DIR): Promise<string[]> {
  const migrations = readPostgresMigrations(dir);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1::bigint)", [MIGRATION_LOCK_KEY]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS "_migrations" ` +
        `("name" TEXT PRIMARY KEY, "checksum" TEXT NOT NULL, "appliedAt" TIMESTAMPTZ NOT NULL DEFAULT now())`,
    );
    const { rows } = await client.query<{ name: string; checksum: string }>(`SELECT "name", "checksum" FROM "_migrations"`);
    const done = new Map(rows.map((row) => [row.name, row.checksum]));
    const applied: string[] = [];
    for (const migration of migrations) {
      const checksum = done.get(migration.name);
      if (checksum !== undefined) {
        if (checksum !== migration.checksum) {
          throw new Error(`migration ${migration.name} was edited after it was applied: add a new migration instead`);
        }
        continue;
      }
      await client.query("BEGIN");
      try {
        await client.query(migration.sql);
        await client.query(`INSERT INTO "_migrations" ("name", "checksum") VALUES ($1, $2)`, [migration.name, migration.checksum]);
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw new Error(`migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(migration.name);
    }
    return applied;
  } finally {
    // Ending the session releases the advisory lock too, also when an error left the connection unusable.
    await client.query("SELECT pg_advisory_unlock($1::bigint)", [MIGRATION_LOCK_KEY]).catch(() => {});
    await client.end().catch(() => {});
  }
}

// `node --import tsx lib/db/postgres-migrations.ts`: what migrateDatabase runs
// (it is synchronous for its callers, the pg client is not).
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const url = process.env.DATABASE_URL ?? "";
  migratePostgres(url).then(
    (applied) => {
      for (const name of applied) console.log(`applied migration ${name}`);
    },
    (error: Error) => {
      console.error(error.message);
      process.exit(1);
    },
  );
}
