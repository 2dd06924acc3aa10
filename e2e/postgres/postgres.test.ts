// The app on a real PostgreSQL (docs/product.md §7): migrations on an empty database,
// the OAuth flow end to end, and the exactly-once guarantees under concurrency.
// PostgreSQL must be reachable at TEST_POSTGRES_URL (npm test starts one when none
// answers): when it is not, these tests fail; nothing is skipped.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";
import { createPostgresDatabase, startApp, type PostgresDatabase, type RunningApp } from "../support/app";
import { approvedCode, createWatchCredential, exchangeCode, INITIALIZE_PARAMS, mcp, obtainTokens, refreshTokens } from "../support/oauth";
import { migrateDatabase } from "@/lib/db/migrate";
import { migratePostgres, POSTGRES_MIGRATIONS_DIR, readPostgresMigrations } from "@/lib/db/postgres-migrations";
import { db } from "@/lib/db";
import { sha256Hex } from "@/lib/crypto";
import { recordAudit, recordAuditIn, verifyAuditChain } from "@/lib/audit";

const PARALLEL = 50;

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

const tables = async (url: string) =>
  (await query<{ tablename: string }>(url, `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`)).map(
    (row) => row.tablename,
  );

/** What one instance runs at start for PostgreSQL (lib/db/migrate.ts), as its own process. */
function migrateInAnotherProcess(url: string): Promise<{ code: number | null; output: string }> {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
  const child = spawn(process.execPath, ["--import", tsx, path.resolve("lib/db/postgres-migrations.ts")], {
    env: { ...process.env, DATABASE_URL: url },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, output })));
}

describe("PostgreSQL migrations", () => {
  const databases: PostgresDatabase[] = [];
  const fresh = async () => {
    const database = await createPostgresDatabase();
    databases.push(database);
    return database;
  };
  after(async () => {
    for (const database of databases) await database.drop();
  });

  it("migrateDatabase creates the schema on an empty database; a second run applies nothing", async () => {
    const { url } = await fresh();
    assert.deepEqual(await tables(url), []);
    migrateDatabase(url);
    const created = await tables(url);
    for (const table of ["User", "Client", "Grant", "AuthorizationCode", "RefreshToken", "AuditEvent", "_migrations"]) {
      assert.ok(created.includes(table), `${table} in ${created.join(", ")}`);
    }
    const names = readPostgresMigrations().map((migration) => migration.name);
    assert.ok(names.includes("0001_init"));
    const recorded = await query<{ name: string; appliedAt: Date }>(url, `SELECT "name", "appliedAt" FROM "_migrations" ORDER BY "name"`);
    assert.deepEqual(
      recorded.map((row) => row.name),
      names,
    );

    migrateDatabase(url);
    assert.deepEqual(await migratePostgres(url), [], "nothing left to apply");
    const again = await query<{ name: string; appliedAt: Date }>(url, `SELECT "name", "appliedAt" FROM "_migrations" ORDER BY "name"`);
    assert.deepEqual(again, recorded, "the second runs changed nothing");
    assert.deepEqual(await tables(url), created);
  });

  it("instances migrating at once apply each migration exactly once (in-process and as separate processes)", async () => {
    const inProcess = await fresh();
    const runs = await Promise.all(Array.from({ length: 5 }, () => migratePostgres(inProcess.url)));
    assert.equal(runs.filter((applied) => applied.length > 0).length, 1, JSON.stringify(runs));
    assert.deepEqual(
      runs.flat().sort(),
      readPostgresMigrations().map((migration) => migration.name),
    );

    const processes = await fresh();
    const results = await Promise.all(Array.from({ length: 3 }, () => migrateInAnotherProcess(processes.url)));
    for (const result of results) assert.equal(result.code, 0, result.output);
    const appliedBy = results.filter((result) => /applied migration 0001_init/.test(result.output));
    assert.equal(appliedBy.length, 1, results.map((result) => result.output).join("\n---\n"));
    assert.equal((await query(processes.url, `SELECT 1 FROM "_migrations"`)).length, readPostgresMigrations().length);
  });

  it("a failing migration leaves nothing behind; an applied migration that was edited stops the start", async () => {
    const { url } = await fresh();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "aw-migrations-"));
    try {
      fs.cpSync(POSTGRES_MIGRATIONS_DIR, dir, { recursive: true });
      fs.mkdirSync(path.join(dir, "9999_broken"));
      fs.writeFileSync(path.join(dir, "9999_broken", "migration.sql"), `CREATE TABLE "Half" ("id" TEXT);\nSELECT no_such_function();\n`);
      await assert.rejects(migratePostgres(url, dir), /migration 9999_broken failed/);
      assert.ok(!(await tables(url)).includes("Half"), "the failed migration was rolled back");
      assert.deepEqual(
        (await query<{ name: string }>(url, `SELECT "name" FROM "_migrations" ORDER BY "name"`)).map((row) => row.name),
        fs
          .readdirSync(POSTGRES_MIGRATIONS_DIR, { withFileTypes: true })
          .filter((entry) => entry.isDirectory())
          .map((entry) => entry.name)
          .sort(),
        "every migration before the broken one stays applied, the broken one is not recorded",
      );

      fs.rmSync(path.join(dir, "9999_broken"), { recursive: true });
      fs.appendFileSync(path.join(dir, "0001_init", "migration.sql"), "\n-- edited\n");
      await assert.rejects(migratePostgres(url, dir), /0001_init was edited after it was applied/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

async function outcomes(responses: Response[]) {
  return Promise.all(
    responses.map(async (response) => ({ status: response.status, body: (await response.json()) as Record<string, string> })),
  );
}

describe("the app on PostgreSQL", () => {
  let app: RunningApp;
  before(async () => {
    // A server need not run in UTC: what it reads past the ORM must mean the same in any time zone.
    app = await startApp({ database: "postgres", env: { TZ: "America/New_York" } });
  });
  after(() => app?.stop());

  it("runs on PostgreSQL, in the server and in this process", async () => {
    assert.match(app.databaseUrl, /^postgresql:\/\/.*\/aw_[0-9a-f]+$/);
    const [row] = await db().$queryRawUnsafe<{ version: string }[]>("SELECT version() AS version");
    assert.match(row.version, /^PostgreSQL/);
  });

  it("registration, authorize, approval, code exchange and refresh", async () => {
    const { client, tokens, grantId } = await obtainTokens(app);
    assert.equal(tokens.token_type, "Bearer");
    assert.ok(tokens.access_token && tokens.refresh_token);
    assert.equal((await mcp(app, tokens.access_token, "initialize", INITIALIZE_PARAMS)).status, 200);

    const refreshed = await refreshTokens(app, client, tokens.refresh_token!);
    assert.equal(refreshed.status, 200, await refreshed.clone().text());
    const pair = (await refreshed.json()) as { access_token: string; refresh_token: string };
    assert.ok(pair.refresh_token && pair.refresh_token !== tokens.refresh_token);
    assert.equal((await mcp(app, pair.access_token, "initialize", INITIALIZE_PARAMS)).status, 200);
    assert.equal(await db().refreshToken.count({ where: { grantId } }), 2);
    assert.equal((await db().grant.findUniqueOrThrow({ where: { id: grantId } })).status, "active");
  });

  it("a grant's last use is written again once a minute has passed, in a server that is not on UTC", async () => {
    const { tokens, grantId } = await obtainTokens(app);
    const twoMinutesAgo = new Date(Date.now() - 120_000);
    await db().grant.update({ where: { id: grantId }, data: { lastUsedAt: twoMinutesAgo } });
    assert.equal((await mcp(app, tokens.access_token, "initialize", INITIALIZE_PARAMS)).status, 200);
    let lastUsedAt = twoMinutesAgo;
    // written after the answer, without holding it
    for (let attempt = 0; attempt < 50 && lastUsedAt <= twoMinutesAgo; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      lastUsedAt = (await db().grant.findUniqueOrThrow({ where: { id: grantId } })).lastUsedAt!;
    }
    assert.ok(lastUsedAt.getTime() > Date.now() - 30_000, `last used ${lastUsedAt.toISOString()}, not moved on`);
  });

  it("an /mcp tool call resolves the bearer, its grant and credentials, and lists exactly the granted ones", async () => {
    const { tokens } = await obtainTokens(app, {
      credentials: async (userId) => {
        const main = await createWatchCredential(userId, "Main");
        await createWatchCredential(userId, "Not granted");
        const spare = await createWatchCredential(userId, "Spare");
        return [
          { credentialId: main.id, mode: "read" },
          { credentialId: spare.id, mode: "approve" },
        ];
      },
    });
    assert.equal((await mcp(app, tokens.access_token, "initialize", INITIALIZE_PARAMS)).status, 200);
    const reply = (await (await mcp(app, tokens.access_token, "tools/call", { name: "list_credentials", arguments: {} })).json()) as {
      result: { structuredContent: { credentials: { name: string; mode: string }[] } };
    };
    assert.deepEqual(
      reply.result.structuredContent.credentials.map(({ name, mode }) => ({ name, mode })),
      [
        { name: "Main", mode: "read" },
        { name: "Spare", mode: "approve" },
      ],
    );
  });

  it(`${PARALLEL} parallel exchanges of one code: one token response, the rest invalid_grant, the client ends revoked`, async () => {
    const { client, code, verifier, grantId } = await approvedCode(app, { scope: "mcp offline_access" });
    const results = await outcomes(await Promise.all(Array.from({ length: PARALLEL }, () => exchangeCode(app, client, code, verifier))));
    const ok = results.filter((result) => result.status === 200);
    assert.equal(ok.length, 1, `exactly one success, got ${JSON.stringify(results.map((result) => result.status))}`);
    assert.ok(ok[0].body.access_token && ok[0].body.refresh_token);
    for (const result of results.filter((result) => result.status !== 200)) {
      assert.equal(result.status, 400, JSON.stringify(result.body));
      assert.equal(result.body.error, "invalid_grant");
    }
    assert.equal((await db().client.findUniqueOrThrow({ where: { id: client.client_id } })).status, "revoked");
    assert.equal((await db().grant.findUniqueOrThrow({ where: { id: grantId } })).status, "revoked");
    assert.equal((await mcp(app, ok[0].body.access_token, "initialize", INITIALIZE_PARAMS)).status, 401);
    assert.equal(await db().refreshToken.count({ where: { grantId } }), 1, "one refresh token was issued, not several");
    assert.equal(await db().auditEvent.count({ where: { type: "token.issued", clientId: client.client_id } }), 1);
    assert.equal(await db().auditEvent.count({ where: { type: "client.revoked", clientId: client.client_id } }), 1, "revoked once");
  });

  it(`${PARALLEL} parallel refreshes of one refresh token: one new pair`, async () => {
    const { client, tokens, grantId } = await obtainTokens(app);
    const results = await outcomes(
      await Promise.all(Array.from({ length: PARALLEL }, () => refreshTokens(app, client, tokens.refresh_token!))),
    );
    const ok = results.filter((result) => result.status === 200);
    assert.equal(ok.length, 1, `exactly one success, got ${JSON.stringify(results.map((result) => result.status))}`);
    assert.ok(ok[0].body.refresh_token && ok[0].body.refresh_token !== tokens.refresh_token);
    for (const result of results.filter((result) => result.status !== 200)) {
      assert.equal(result.status, 400, JSON.stringify(result.body));
      assert.equal(result.body.error, "invalid_grant");
    }
    const rows = await db().refreshToken.findMany({ where: { grantId } });
    assert.equal(rows.length, 2, "the original and one successor");
    assert.ok(rows.find((row) => row.tokenHash === sha256Hex(tokens.refresh_token!))?.rotatedAt);
    assert.ok(rows.some((row) => row.tokenHash === sha256Hex(ok[0].body.refresh_token)));
    assert.equal(await db().auditEvent.count({ where: { type: "token.refreshed", clientId: client.client_id } }), 1);
  });

  it("an append after the head moved elsewhere (another instance, a caller's transaction) chains after the new head", async () => {
    await recordAudit({ type: "mcp.tool_called", clientId: "c_moved", data: { order: 1 } });
    // Appended past this process's queue, as another instance's append would be: the head it remembers is stale.
    await db().$transaction((tx) => recordAuditIn(tx, [{ type: "mcp.tool_called", clientId: "c_moved", data: { order: 2 } }]));
    await recordAudit({ type: "mcp.tool_called", clientId: "c_moved", data: { order: 3 } });
    await recordAudit({ type: "mcp.tool_called", clientId: "c_moved", data: { order: 4 } });
    const appended = await db().auditEvent.findMany({ where: { clientId: "c_moved" }, orderBy: { seq: "asc" } });
    assert.deepEqual(
      appended.map((event) => JSON.parse(event.data).order),
      [1, 2, 3, 4],
    );
    assert.deepEqual(
      appended.map((event) => event.seq - appended[0].seq),
      [0, 1, 2, 3],
      "each after the one before, none lost",
    );
    const verification = await verifyAuditChain();
    assert.ok(verification.ok, JSON.stringify(verification));
  });

  it("50 concurrent audit appends from this process: one unbroken chain", async () => {
    const before = await db().auditEvent.count();
    await Promise.all(
      Array.from({ length: 50 }, (_, index) => recordAudit({ type: "mcp.tool_called", clientId: "c_concurrency", data: { index } })),
    );
    const appended = await db().auditEvent.findMany({ where: { clientId: "c_concurrency" }, orderBy: { seq: "asc" } });
    assert.equal(appended.length, 50);
    assert.deepEqual(
      appended.map((event) => JSON.parse(event.data).index).sort((a, b) => a - b),
      Array.from({ length: 50 }, (_, index) => index),
    );
    assert.equal(await db().auditEvent.count(), before + 50);
    const verification = await verifyAuditChain();
    assert.ok(verification.ok, JSON.stringify(verification));
    assert.equal(verification.events, before + 50);
  });
});
