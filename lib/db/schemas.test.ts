// The PostgreSQL schema is generated from the SQLite one and committed (its
// migrations are authored against it): these tests fail when someone edits one
// schema without the other, or adds a migration for one database only.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..", "..");
const read = (...parts: string[]) => fs.readFileSync(path.join(root, ...parts), "utf8");

/** The models: everything after the datasource block. */
function models(schema: string): string {
  const datasource = /\ndatasource\s+\w+\s*\{[^}]*\}\n/.exec(schema);
  assert.ok(datasource, "no datasource block");
  return schema.slice(datasource.index + datasource[0].length);
}

function migrationNames(...dir: string[]): string[] {
  return fs
    .readdirSync(path.join(root, ...dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

describe("Prisma schemas", () => {
  it("SQLite and PostgreSQL declare the same models", () => {
    assert.equal(models(read("prisma", "postgresql", "schema.prisma")), models(read("prisma", "schema.prisma")));
  });

  it("prisma/postgresql/schema.prisma is what scripts/prisma-schemas.mjs writes", () => {
    const check = spawnSync(process.execPath, [path.join(root, "scripts", "prisma-schemas.mjs"), "--check"], { encoding: "utf8" });
    assert.equal(check.status, 0, check.stderr);
  });

  it("the PostgreSQL schema targets postgresql and its own client", () => {
    const schema = read("prisma", "postgresql", "schema.prisma");
    assert.match(schema, /provider\s*=\s*"postgresql"/);
    assert.match(schema, /output\s*=\s*"\.\.\/\.\.\/lib\/generated\/prisma-pg"/);
  });

  it("every migration exists for both databases, under the same name", () => {
    assert.deepEqual(migrationNames("prisma", "postgresql", "migrations"), migrationNames("prisma", "migrations"));
  });
});
