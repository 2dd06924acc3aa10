#!/usr/bin/env node
// `node scripts/node24.mjs <script> [arguments]`: runs a script of the project (.mjs, .js, or .ts through tsx) on Node 24.
// The npm scripts that run the project go through it (npm start, npm test, npm run bench, next build and the rest).
// On Node 24 or later the script runs in this very process: nothing more is started and nothing is said. On an older
// Node it runs on tools/node24's Node 24 (installed by `npm install`), in a child this process waits for, after one
// line on stderr that says so; signals are passed on and the child's exit is this process's.
import { spawn } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { binary, installedVersion, machineIsMaintained, machineNodeIs, MAINTAINED_MAJOR } from "./runtime.mjs";

const [script, ...args] = process.argv.slice(2);
if (!script) {
  console.error("usage: node scripts/node24.mjs <script> [arguments]");
  process.exit(2);
}
const typescript = /\.tsx?$/.test(script);

if (machineIsMaintained) {
  process.argv = [process.execPath, path.resolve(script), ...args];
  if (typescript) await import("tsx");
  await import(pathToFileURL(path.resolve(script)).href);
} else {
  const version = installedVersion();
  if (!version) {
    const remedy =
      process.platform === "linux" && process.arch === "x64"
        ? "run npm install, which brings it"
        : `install Node ${MAINTAINED_MAJOR} or later (npm install brings it only on linux-x64)`;
    console.error(`${machineNodeIs()}, and there is no Node ${MAINTAINED_MAJOR} in tools/node24: ${remedy}.`);
    process.exit(1);
  }
  console.error(`${machineNodeIs()}: running on Node ${version} from tools/node24`);
  const tsx = typescript ? ["--import", import.meta.resolve("tsx")] : [];
  const child = spawn(binary, [...tsx, script, ...args], { stdio: "inherit" });
  // As npm does for its scripts: a signal this process gets is the child's too (Ctrl-C reaches both, as before).
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
}
