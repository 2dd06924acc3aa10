#!/usr/bin/env node
// The `agent-wallet` bin: loads the TypeScript CLI through tsx (a dependency),
// with this project's tsconfig whatever the current directory is.
import { fileURLToPath } from "node:url";
import { register } from "tsx/esm/api";

register({ tsconfig: fileURLToPath(new URL("../tsconfig.json", import.meta.url)) });
const { main } = await import("./main.ts");

const controller = new AbortController();
process.once("SIGINT", () => controller.abort(Object.assign(new Error("Interrupted"), { name: "AbortError" })));
const code = await main(
  process.argv.slice(2),
  { stdout: (text) => process.stdout.write(`${text}\n`), stderr: process.stderr, stdin: process.stdin, env: process.env },
  controller.signal,
);
process.exitCode = code;
