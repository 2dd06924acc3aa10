// The several-instance setup as the README documents it, started exactly so: three `npm start`s at once on one empty
// PostgreSQL database, each with its own data folder and port (three machines behind a load balancer), sharing the
// secrets from the environment. They must all migrate (once), come up, and serve one deployment.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { createPostgresDatabase, freePort, type PostgresDatabase } from "../support/app";
import { npmStart, type NpmStart } from "../support/npm-start";
import { readPostgresMigrations } from "@/lib/db/postgres-migrations";

const secret = () => randomBytes(32).toString("base64url");

describe("npm start: several instances at once on one empty PostgreSQL database", { timeout: 240_000 }, () => {
  let database: PostgresDatabase;
  const instances: { port: number; dataDir: string; started: NpmStart }[] = [];
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
    await Promise.all(instances.map((instance) => instance.started.waitFor(/^Agent Wallet is ready: open /m)));
  });

  after(async () => {
    for (const instance of instances) {
      instance.started.kill();
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
