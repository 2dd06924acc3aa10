#!/usr/bin/env node
// Writes prisma/postgresql/schema.prisma from prisma/schema.prisma: the same
// models, only the generator output and the datasource provider differ. The
// result is committed (its migrations are authored against it with
// `migrate diff`); lib/db/schemas.test.ts fails when it is stale.
//   node scripts/prisma-schemas.mjs          write it
//   node scripts/prisma-schemas.mjs --check  exit 1 when it differs
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const SQLITE_SCHEMA = path.join(root, "prisma", "schema.prisma");
export const POSTGRES_SCHEMA = path.join(root, "prisma", "postgresql", "schema.prisma");

const HEADER = `// GENERATED from prisma/schema.prisma by scripts/prisma-schemas.mjs: edit that
// file and run \`node scripts/prisma-schemas.mjs\`. The models are the same; only
// the client's output folder and the provider differ (docs/decisions/0004-postgresql.md).
`;

/** Everything after the datasource block: the models. */
export function modelSection(schema) {
  const match = /\ndatasource\s+\w+\s*\{[^}]*\}\n/.exec(schema);
  if (!match) throw new Error("schema.prisma: no datasource block");
  return schema.slice(match.index + match[0].length);
}

export function postgresSchema(sqliteSchema) {
  return `${HEADER}
generator client {
  provider     = "prisma-client"
  output       = "../../lib/generated/prisma-pg"
  engineType   = "client"
  moduleFormat = "esm"
}

datasource db {
  provider = "postgresql"
  url      = "postgresql://unused" // the driver adapter in lib/db decides
}
${modelSection(sqliteSchema)}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const expected = postgresSchema(fs.readFileSync(SQLITE_SCHEMA, "utf8"));
  const current = fs.existsSync(POSTGRES_SCHEMA) ? fs.readFileSync(POSTGRES_SCHEMA, "utf8") : "";
  if (process.argv.includes("--check")) {
    if (current !== expected) {
      console.error("prisma/postgresql/schema.prisma is stale: run `node scripts/prisma-schemas.mjs` and add a PostgreSQL migration");
      process.exit(1);
    }
  } else if (current !== expected) {
    fs.writeFileSync(POSTGRES_SCHEMA, expected);
    console.log("wrote prisma/postgresql/schema.prisma");
  }
}
