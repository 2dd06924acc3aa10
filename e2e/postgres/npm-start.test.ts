// The several-instance setup as the README documents it, started exactly so: three `npm start`s at once on one empty
// PostgreSQL database, each with its own data folder and port (three machines behind a load balancer), sharing the
// secrets from the environment. They must all migrate (once), come up, and serve one deployment.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { createPostgresDatabase, freePort, type PostgresDatabase } from "../support/app";
import { readPostgresMigrations } from "@/lib/db/postgres-migrations";

const secret = () => randomBytes(32).toString("base64url");

/** `npm start` in the background, in its own process group; `ready` resolves once it says where to go. */
function npmStart(env: Record<string, string>) {
  const child = spawn("npm", ["start"], { env: { ...process.env, ...env }, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  return {
    output: () => output,
    ready: async () => {
      for (const deadline = Date.now() + 150_000; !/^Agent Wallet is ready: open /m.test(output);) {
        if (child.exitCode !== null || Date.now() > deadline) assert.fail(`npm start did not get ready:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
    stop: () => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    },
  };
}

describe("npm start: several instances at once on one empty PostgreSQL database", { timeout: 240_000 }, () => {
  let database: PostgresDatabase;
  const instances: { port: number; dataDir: string; started: ReturnType<typeof npmStart> }[] = [];
  let configured: string;

  before(async () => {
    database = await createPostgresDatabase();
    const ports = [await freePort(), await freePort(), await freePort()];
    // One deployment: one public address (the load balancer's) and one set of secrets for every instance.
    configured = `http://localhost:${ports[0]}`;
    const shared = {
      DATABASE_URL: database.url,
      BASE_URL: configured,
      APP_URL: configured,
      JWT_SIGNING_KEYS: `k1:${secret()}`,
      SESSION_SECRET: secret(),
      ALLOWANCE_KEY_SECRET: secret(),
    };
    for (const port of ports) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aw-instance-"));
      instances.push({ port, dataDir, started: npmStart({ ...shared, DATA_DIR: dataDir, PORT: String(port) }) });
    }
    await Promise.all(instances.map((instance) => instance.started.ready()));
  });

  after(async () => {
    for (const instance of instances) {
      instance.started.stop();
      fs.rmSync(instance.dataDir, { recursive: true, force: true });
    }
    await database?.drop();
  });

  it("every instance migrated, started and answers as the one deployment", async () => {
    for (const { port, started } of instances) {
      assert.doesNotMatch(started.output(), /migration failed/i, started.output());
      const response = await fetch(`http://127.0.0.1:${port}/.well-known/oauth-authorization-server`);
      assert.equal(response.status, 200);
      assert.equal(((await response.json()) as { issuer: string }).issuer, configured);
    }
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string }>(`SELECT "name" FROM "_migrations" ORDER BY "name"`);
      assert.deepEqual(
        rows.map((row) => row.name),
        readPostgresMigrations().map((migration) => migration.name),
        "each migration applied once",
      );
    } finally {
      await client.end();
    }
  });

  it("a client registered through one instance is known to the others", async () => {
    const [first, ...others] = instances;
    const registered = await fetch(`http://127.0.0.1:${first.port}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Spread", redirect_uris: ["http://localhost:9/callback"], token_endpoint_auth_method: "none" }),
    });
    assert.equal(registered.status, 201, await registered.clone().text());
    const { client_id } = (await registered.json()) as { client_id: string };
    for (const { port } of others) {
      const query = new URLSearchParams({
        response_type: "code",
        client_id,
        redirect_uri: "http://localhost:9/callback",
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        code_challenge_method: "S256",
        state: "s",
      });
      const response = await fetch(`http://127.0.0.1:${port}/oauth/authorize?${query}`, { redirect: "manual" });
      assert.equal(response.status, 302, `instance on ${port} knows the client`);
      assert.match(response.headers.get("location") ?? "", /\/consent\?request=/);
    }
  });
});
