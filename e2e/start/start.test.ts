import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

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
