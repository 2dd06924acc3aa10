import path from "node:path";
import { defineConfig } from "prisma/config";
import { PrismaPg } from "@prisma/adapter-pg";

// The PostgreSQL schema (prisma/postgresql/schema.prisma, generated from
// prisma/schema.prisma): `generate` and `migrate diff` use this file, e.g.
//   node scripts/prisma.mjs generate --config prisma.postgresql.config.ts
// Migrations are applied by lib/db/migrate.ts, not by `prisma migrate deploy`
// (docs/decisions/0004-postgresql.md).
export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: path.join("prisma", "postgresql", "schema.prisma"),
  migrations: { path: path.join("prisma", "postgresql", "migrations") },
  async adapter() {
    return new PrismaPg({ connectionString: process.env.DATABASE_URL || "postgresql://postgres@127.0.0.1:5432/postgres" });
  },
});
