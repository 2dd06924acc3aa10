// npm start: validate the configuration, prepare the database and secrets,
// build when no build exists, then serve the app.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import { ConfigError, parseConfig } from "@/lib/config";
import { migrateDatabase } from "@/lib/db/migrate";
import { serverArguments } from "./server-bundle";

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

let settings;
try {
  settings = parseConfig(process.env);
} catch (error) {
  if (error instanceof ConfigError) fail(error.message);
  throw error;
}

try {
  migrateDatabase(settings.databaseUrl);
} catch (error) {
  fail((error as Error).message);
}

const nextBin = createRequire(import.meta.url).resolve("next/dist/bin/next");
if (!fs.existsSync(`${process.env.NEXT_DIST_DIR || ".next"}/BUILD_ID`)) {
  console.log("No build found: building the app once (next build)…");
  const build = spawnSync(process.execPath, [nextBin, "build"], { stdio: "inherit" });
  if (build.status !== 0) fail("next build failed");
}

// server.ts: Next.js, with /mcp served past its routing layer (docs/decisions/0011-mcp-beside-next.md).
const server = spawn(process.execPath, serverArguments(), {
  stdio: "inherit",
  env: {
    ...process.env,
    PORT: String(settings.port),
    DATA_DIR: settings.dataDir,
    DATABASE_URL: settings.databaseUrl,
    NEXTAUTH_URL: settings.appUrl,
    NEXTAUTH_SECRET: settings.sessionSecret,
  },
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => server.kill(signal));
server.on("exit", (code) => process.exit(code ?? 0));
