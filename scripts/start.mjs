// npm start on bare Node: scripts/start.ts (configuration check, migrations, build, then the server) compiled with
// esbuild and run in this process. Under tsx the launcher, which waits beside the server for its whole life, was
// two processes and about 150 MB.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { buildSync } from "esbuild";

// Beside the packages it imports, and out of the build folder, whose absence means "not built yet".
const outfile = path.resolve("node_modules/.cache/agent-wallet/start.mjs");
fs.mkdirSync(path.dirname(outfile), { recursive: true });
buildSync({
  entryPoints: ["scripts/start.ts"],
  bundle: true,
  packages: "external",
  platform: "node",
  format: "esm",
  target: "node20",
  outfile,
  logLevel: "error",
});
await import(pathToFileURL(outfile).href);
