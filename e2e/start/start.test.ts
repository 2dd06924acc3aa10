import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { createPostgresDatabase, freePort, type PostgresDatabase } from "../support/app";
import { npmStart } from "../support/npm-start";
import { serverArguments } from "@/scripts/server-bundle";

/** npm start (scripts/start.mjs running scripts/start.ts) with a bad setting: it must stop before migrating or building. */
function start(env: Record<string, string>) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aw-start-"));
  const distDir = `.next-start-test-${process.pid}`;
  try {
    const result = spawnSync(process.execPath, ["scripts/start.mjs"], {
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: "", NEXT_DIST_DIR: distDir, ...env },
      encoding: "utf8",
      timeout: 60_000,
    });
    return { ...result, dataDirEntries: fs.readdirSync(dataDir), built: fs.existsSync(distDir) };
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(distDir, { recursive: true, force: true });
  }
}

describe("npm start with a bad configuration", () => {
  for (const [variable, value] of [
    ["BASE_URL", "nope"],
    ["APP_URL", "http://localhost:3000/app"],
    ["CHAINS", "{"],
    ["JWT_SIGNING_KEYS", "short"],
  ] as const) {
    it(`${variable}=${value} exits non-zero, names ${variable}, and neither migrates nor builds`, () => {
      const result = start({ [variable]: value });
      assert.equal(result.error, undefined, String(result.error));
      assert.notEqual(result.status, 0, `exit status ${result.status}`);
      assert.match(result.stderr, new RegExp(`\\b${variable}\\b`), result.stderr);
      assert.doesNotMatch(result.stdout, /build/i, "it failed before building");
      assert.deepEqual(result.dataDirEntries, [], "no database file created");
      assert.equal(result.built, false);
    });
  }
});

describe("PostgreSQL without ALLOWANCE_KEY_SECRET", { timeout: 120_000 }, () => {
  let database: PostgresDatabase;
  before(async () => {
    database = await createPostgresDatabase();
  });
  after(() => database?.drop());

  // Several instances, as documented: everything shared from the environment but the delegate key's secret.
  const unset = () => ({
    DATABASE_URL: database.url,
    JWT_SIGNING_KEYS: `k1:${randomBytes(32).toString("base64url")}`,
    SESSION_SECRET: randomBytes(32).toString("base64url"),
    ALLOWANCE_KEY_SECRET: "",
  });
  const refusal = (output: string) => {
    assert.match(output, /\bALLOWANCE_KEY_SECRET: must be set on PostgreSQL\b/, output);
    assert.match(output, /every instance/, "says why");
  };
  async function tables(): Promise<number> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return Number((await client.query(`SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'public'`)).rows[0].n);
    } finally {
      await client.end();
    }
  }

  it("npm start exits non-zero, names ALLOWANCE_KEY_SECRET and why, and neither migrates nor builds", async () => {
    const result = start(unset());
    assert.equal(result.error, undefined, String(result.error));
    assert.notEqual(result.status, 0, `exit status ${result.status}`);
    refusal(result.stderr);
    assert.doesNotMatch(result.stdout, /build/i, "it failed before building");
    assert.equal(result.built, false);
    assert.deepEqual(result.dataDirEntries, [], "no secret generated into the data folder");
    assert.equal(await tables(), 0, "not migrated");
  });

  it("the production server (server.ts, started without npm start) refuses too, before it listens", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aw-start-"));
    try {
      const result = spawnSync(process.execPath, serverArguments(), {
        env: { ...process.env, ...unset(), DATA_DIR: dataDir, PORT: String(await freePort()) },
        encoding: "utf8",
        timeout: 60_000,
      });
      assert.equal(result.error, undefined, String(result.error));
      assert.notEqual(result.status, 0, `exit status ${result.status}`);
      refusal(result.stderr);
      assert.doesNotMatch(result.stdout, /listening/);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("npm start says where to go", { timeout: 120_000 }, () => {
  it("with no build yet, it says that the first build is running and how long it takes", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aw-start-"));
    const distDir = `.next-start-test-${process.pid}`;
    const started = npmStart({
      DATA_DIR: dataDir,
      DATABASE_URL: `file:${dataDir}/agent-wallet.db`,
      NEXT_DIST_DIR: distDir,
      PORT: String(await freePort()),
    });
    try {
      await started.waitFor(/^First start: building the app \(next build\), 1 to 4 minutes on two cores; later starts skip this\.$/m);
    } finally {
      started.kill();
      fs.rmSync(dataDir, { recursive: true, force: true });
      fs.rmSync(distDir, { recursive: true, force: true });
    }
  });

  it("once it answers, it prints APP_URL to open", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aw-start-"));
    const port = await freePort();
    const appUrl = `http://localhost:${port}`;
    const started = npmStart({
      DATA_DIR: dataDir,
      DATABASE_URL: `file:${dataDir}/agent-wallet.db`,
      PORT: String(port),
      APP_URL: appUrl,
      BASE_URL: appUrl,
    });
    try {
      const output = await started.waitFor(/^Agent Wallet is ready: open /m);
      assert.match(output, new RegExp(`^Agent Wallet is ready: open ${appUrl}$`, "m"));
      assert.doesNotMatch(output, /First start/, "the suite's build is used");
      assert.equal((await fetch(`${appUrl}/.well-known/oauth-authorization-server`)).status, 200);
    } finally {
      started.kill();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
