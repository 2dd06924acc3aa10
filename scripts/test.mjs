#!/usr/bin/env node
// npm test: builds the app once, runs every suite (unit tests beside lib/, HTTP,
// browser and end-to-end tests in e2e/), each test file starting the servers it
// needs, and ends with one line: "N passed, M failed[, K skipped]".
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";

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

const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1" };
if (process.env.SKIP_BUILD !== "1") {
  console.log("Building the app for the end-to-end suites (next build)…");
  const build = spawnSync(process.execPath, [require.resolve("next/dist/bin/next"), "build"], {
    stdio: ["ignore", "pipe", "pipe"],
    env,
    encoding: "utf8",
  });
  if (build.status !== 0) {
    console.log(build.stdout, build.stderr);
    console.log("0 passed, 1 failed");
    process.exit(1);
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
const child = spawn(process.execPath, args, { stdio: "inherit", env });
child.on("exit", (code) => {
  let totals = { passed: 0, failed: 0, skipped: 0 };
  try {
    totals = JSON.parse(fs.readFileSync(totalsFile, "utf8"));
  } catch {
    totals.failed = Math.max(1, totals.failed);
  }
  if (code !== 0 && totals.failed === 0) totals.failed = 1; // a file that crashed before reporting
  const skipped = totals.skipped ? `, ${totals.skipped} skipped` : "";
  console.log(`${totals.passed} passed, ${totals.failed} failed${skipped}`);
  process.exit(totals.failed ? 1 : 0);
});
