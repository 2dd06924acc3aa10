// The project runs on Node 24 (docs/decisions/0030-node-24.md): the npm scripts that run it go through
// scripts/node24.mjs, which on a machine whose Node is older runs them on tools/node24's Node 24 and says so in one
// line, and on Node 24 or later runs them itself and says nothing. better-sqlite3, built per Node ABI, loads on both.
// "The machine's Node" is the one on PATH, which npm runs on; the tests themselves run on Node 24.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const machineNode = spawnSync("node", ["-p", "process.versions.node"], { encoding: "utf8" }).stdout.trim();
const machineIsOlder = Number(machineNode.split(".")[0]) < 24;
const NOTICE = /^Node \S+ is (past its end of life|older than Node 24): running on Node 24\.\d+\.\d+ from tools\/node24$/;

/** A TypeScript script that prints the Node it runs on and its arguments, and exits with status 3. */
function probe(): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "aw-node24-")), "probe.ts");
  fs.writeFileSync(
    file,
    [
      "const said: string = JSON.stringify({ node: process.versions.node, args: process.argv.slice(2) });",
      "console.log(said);",
      "process.exit(3);",
    ].join("\n"),
  );
  return file;
}

describe("the Node the project runs on", () => {
  it("npm test runs the suites on Node 24 or later", () => {
    assert.ok(Number(process.versions.node.split(".")[0]) >= 24, `the tests run on Node ${process.versions.node}`);
  });

  it("scripts/node24.mjs from the machine's Node runs a script on Node 24 with its arguments and exit status", () => {
    const run = spawnSync("node", ["scripts/node24.mjs", probe(), "--flag", "two words"], { encoding: "utf8" });
    assert.equal(run.status, 3, run.stderr);
    const said = JSON.parse(run.stdout) as { node: string; args: string[] };
    assert.ok(Number(said.node.split(".")[0]) >= 24, `ran on Node ${said.node}`);
    assert.deepEqual(said.args, ["--flag", "two words"]);
    if (machineIsOlder) {
      assert.match(run.stderr.trim(), NOTICE, "one line saying so, on stderr");
      assert.ok(run.stderr.trim().startsWith(`Node ${machineNode} is `), run.stderr);
      assert.ok(run.stderr.trim().includes(`running on Node ${said.node} `), run.stderr);
    } else {
      assert.equal(said.node, machineNode, "a maintained Node runs it itself");
      assert.equal(run.stderr, "", "and nothing is said");
    }
  });

  it("scripts/node24.mjs on Node 24 runs the script itself and says nothing", () => {
    const run = spawnSync(process.execPath, ["scripts/node24.mjs", probe(), "x"], { encoding: "utf8" });
    assert.equal(run.status, 3, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { node: process.versions.node, args: ["x"] });
    assert.equal(run.stderr, "");
  });

  it("every npm script that runs the project's code goes through scripts/node24.mjs", () => {
    const { scripts } = JSON.parse(fs.readFileSync("package.json", "utf8")) as { scripts: Record<string, string> };
    // npm's own steps and the tools that only read the sources: they run on the machine's Node, as npm does.
    const onTheMachinesNode = new Set(["postinstall", "prisma:schemas", "typecheck", "lint", "format"]);
    for (const [name, command] of Object.entries(scripts)) {
      if (onTheMachinesNode.has(name)) continue;
      assert.match(command, /^node scripts\/node24\.mjs \S/, `npm run ${name}: ${command}`);
    }
    for (const name of ["start", "test", "bench", "build"]) assert.ok(scripts[name], name);
  });

  it("better-sqlite3 opens a database on the machine's Node and on Node 24", () => {
    const script = `const Database = require("better-sqlite3");
      console.log(new Database(":memory:").prepare("select 1 + 1 as two").get().two);`;
    for (const node of ["node", process.execPath]) {
      const run = spawnSync(node, ["-e", script], { encoding: "utf8" });
      assert.equal(run.status, 0, `${node}: ${run.stderr}`);
      assert.equal(run.stdout.trim(), "2", node);
    }
  });
});
