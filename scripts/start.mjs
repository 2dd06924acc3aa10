// npm start on bare Node: scripts/start.ts (configuration check, migrations, build, then the server) compiled with
// esbuild and run in this process. Under tsx the launcher, which waits beside the server for its whole life, was
// two processes and about 150 MB.
import path from "node:path";
import { pathToFileURL } from "node:url";
import { bundleForNode } from "./node-bundle.mjs";

// Beside the packages it imports, and out of the build folder, whose absence means "not built yet".
const launcher = bundleForNode("scripts/start.ts", path.resolve("node_modules/.cache/agent-wallet/start.mjs"));
await import(pathToFileURL(launcher).href);
