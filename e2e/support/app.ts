// Starts the built app (server.ts, as `npm start` does) on a free port with its own data folder
// and SQLite file (or, with `database: "postgres"`, a fresh PostgreSQL database),
// the way `npm start` does, and points this test process's
// environment at the same database and secrets so that lib/ can be called
// in-process (for the approval step and the injectable clock).
import { createRequire } from "node:module";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { isPostgres } from "@/lib/config/database";
import { migrateDatabase } from "@/lib/db/migrate";
import { serverArguments, serverEnvironment } from "@/scripts/server-bundle";
import pg from "pg";
import { LOCAL_POSTGRES_URL } from "@/scripts/postgres-server.mjs";
import { freePort } from "@/test-chain/node";

export { freePort } from "@/test-chain/node";

export type RunningApp = {
  /** where this instance answers */
  baseUrl: string;
  appUrl: string;
  /** BASE_URL and APP_URL as configured: the same for every instance of one deployment */
  configuredBaseUrl: string;
  configuredAppUrl: string;
  port: number;
  /** the server process, e.g. for reading its memory */
  pid: number;
  dataDir: string;
  databaseUrl: string;
  /** ALLOWANCE_KEY_SECRET as set (PostgreSQL requires it): every instance of one deployment shares it */
  allowanceKeySecret: string | undefined;
  /** everything the server printed, for diagnosing a failure */
  output: () => string;
  /** Ends the server process at once (SIGKILL), as a crash does, leaving its database and data folder for a restart. */
  kill: () => Promise<void>;
  stop: () => Promise<void>;
};

/**
 * The PostgreSQL server the `database: "postgres"` option uses: TEST_POSTGRES_URL, which npm test sets to the local
 * server or, when none answers, to the one it started (scripts/postgres-server.mjs).
 */
const POSTGRES_SERVER_URL = process.env.TEST_POSTGRES_URL ?? LOCAL_POSTGRES_URL;

export type PostgresDatabase = { name: string; url: string; drop: () => Promise<void> };

async function postgresAdmin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: `${POSTGRES_SERVER_URL}/postgres` });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `PostgreSQL is not reachable at ${POSTGRES_SERVER_URL} (${(error as Error).message}); ` +
        "run the suite through npm test, which starts one when none answers there",
    );
  }
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** A fresh, empty PostgreSQL database aw_<random>; drop() removes it (closing any session left on it). */
export async function createPostgresDatabase(): Promise<PostgresDatabase> {
  const name = `aw_${randomBytes(6).toString("hex")}`;
  await postgresAdmin((client) => client.query(`CREATE DATABASE "${name}"`));
  return {
    name,
    url: `${POSTGRES_SERVER_URL}/${name}`,
    drop: () => postgresAdmin(async (client) => void (await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))),
  };
}

export type StartOptions = {
  /** hostname for BASE_URL (default localhost) */
  baseHost?: string;
  /** hostname for APP_URL (default localhost) */
  appHost?: string;
  /**
   * https BASE_URL and APP_URL, as behind a TLS-terminating proxy (production refuses plain http on a host that
   * is not loopback); the app itself still listens on plain http at its port.
   */
  behindTls?: boolean;
  env?: Record<string, string>;
  /** "postgres": a fresh database on the local PostgreSQL (dropped in stop()); default a SQLite file */
  database?: "sqlite" | "postgres";
  /** a database of the caller's own (e.g. on a private PostgreSQL server), kept on stop */
  databaseUrl?: string;
  /** Node options for the server process, e.g. `--cpu-prof` (not allowed in NODE_OPTIONS) */
  nodeArgs?: string[];
  /** `next start` instead of server.ts: /mcp through Next's routing, for the benchmark's comparison */
  nextStart?: boolean;
  /**
   * Another instance of that app, as behind a load balancer: the same database, data folder (secrets),
   * ALLOWANCE_KEY_SECRET and configured URLs; reached at its own port (its `baseUrl`). Stopping it leaves the shared
   * data alone.
   */
  instanceOf?: RunningApp;
};

export async function startApp(options: StartOptions = {}): Promise<RunningApp> {
  const port = await freePort();
  const shared = options.instanceOf;
  const dataDir = shared?.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "aw-app-"));
  const postgres: PostgresDatabase | null = !shared && options.database === "postgres" ? await createPostgresDatabase() : null;
  const databaseUrl = shared?.databaseUrl ?? options.databaseUrl ?? postgres?.url ?? `file:${path.join(dataDir, "agent-wallet.db")}`;
  const scheme = options.behindTls ? "https" : "http";
  const baseUrl = `${scheme}://${options.baseHost ?? "localhost"}:${port}`;
  const appUrl = `${scheme}://${options.appHost ?? "localhost"}:${port}`;
  // On PostgreSQL the app refuses to start without one (lib/allowances/key-secret.ts).
  const keySecret = shared?.allowanceKeySecret ?? (isPostgres(databaseUrl) ? randomBytes(32).toString("base64url") : undefined);
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    BASE_URL: shared?.configuredBaseUrl ?? baseUrl,
    APP_URL: shared?.configuredAppUrl ?? appUrl,
    NEXTAUTH_URL: shared?.configuredAppUrl ?? appUrl,
    ...(keySecret && { ALLOWANCE_KEY_SECRET: keySecret }),
    ...options.env,
  };
  Object.assign(process.env, env);
  // another instance's database is migrated already (and on SQLite this process may hold it open)
  if (!shared) migrateDatabase(databaseUrl);
  const { config } = await import("@/lib/config");
  const settings = config();
  const server = options.nextStart
    ? [createRequire(import.meta.url).resolve("next/dist/bin/next"), "start", "-p", String(port)]
    : serverArguments();
  const child: ChildProcess = spawn(process.execPath, [...(options.nodeArgs ?? []), ...server], {
    env: {
      ...process.env,
      ...serverEnvironment(),
      ...env,
      NEXTAUTH_SECRET: settings.sessionSecret,
      NEXT_TELEMETRY_DISABLED: "1",
      PORT: String(port),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the app exited during start:\n${output}`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/.well-known/oauth-authorization-server`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the app did not start within 60 s:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }

  return {
    baseUrl,
    appUrl,
    configuredBaseUrl: env.BASE_URL,
    configuredAppUrl: env.APP_URL,
    port,
    pid: child.pid!,
    dataDir,
    databaseUrl,
    allowanceKeySecret: env.ALLOWANCE_KEY_SECRET,
    output: () => output,
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGKILL");
      await exited;
    },
    stop: async () => {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
        if (child.exitCode === null) child.kill("SIGKILL");
      }
      // What this process recorded itself (tools run in it) is committed first: an append left for its timer would
      // open a connection again while the database is dropped, and a connection ended under a query fails the process.
      const { runShutdownHooks } = await import("@/lib/runtime/shutdown");
      await runShutdownHooks(5000);
      const { disconnectDatabase } = await import("@/lib/db");
      await disconnectDatabase();
      if (shared) return;
      await postgres?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
