// npm start: validate the configuration, prepare the database and secrets,
// build when no build exists, then serve the app.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import { keySecretsFrom } from "@/lib/allowances/key-secret";
import { ConfigError, parseConfig } from "@/lib/config";
import { migrateDatabase } from "@/lib/db/migrate";
import { serverArguments, serverEnvironment } from "./server-bundle";

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

let settings;
try {
  settings = parseConfig(process.env);
  keySecretsFrom(process.env);
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
  // next build prints nothing for most of its run: say what is happening, and for how long.
  console.log(`First start: building the app (next build), about a minute on two cores; later starts skip this.`);
  const build = spawnSync(process.execPath, [nextBin, "build"], { stdio: "inherit" });
  if (build.status !== 0) fail("next build failed");
}

// server.ts: Next.js, with /mcp served past its routing layer (docs/decisions/0011-mcp-beside-next.md).
const server = spawn(process.execPath, serverArguments(), {
  stdio: "inherit",
  env: {
    ...process.env,
    ...serverEnvironment(),
    PORT: String(settings.port),
    DATA_DIR: settings.dataDir,
    DATABASE_URL: settings.databaseUrl,
    NEXTAUTH_URL: settings.appUrl,
    NEXTAUTH_SECRET: settings.sessionSecret,
  },
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => server.kill(signal));
server.on("exit", (code) => process.exit(code ?? 0));

// The address a person opens is APP_URL (behind a proxy, not the port this process listens on): said once it answers.
for (;;) {
  try {
    await fetch(`http://127.0.0.1:${settings.port}/.well-known/oauth-authorization-server`);
    console.log(`Agent Wallet is ready: open ${settings.appUrl}`);
    break;
  } catch {
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
