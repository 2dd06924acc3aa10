// npm start: validate the configuration, prepare the database and secrets, build when no build exists, start the local
// test chain when no CHAINS is configured (test-chain/index.ts), then serve the app. Each slow step says what it
// does and, once done, how long it took.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import { keySecretsFrom } from "@/lib/allowances/key-secret";
import { ConfigError, parseConfig } from "@/lib/config";
import { migrateDatabase } from "@/lib/db/migrate";
import { serverArguments, serverEnvironment } from "./server-bundle";
import type { TestChain } from "../test-chain";

const began = Date.now();

/** "4.2 s" or "3 min 5 s": how long since `start`. */
function took(start: number): string {
  const seconds = (Date.now() - start) / 1000;
  return seconds < 60 ? `${seconds.toFixed(1)} s` : `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

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
  // next build prints nothing for most of its run: say what is happening, and for how long. Measured on two cores: 55 s
  // when they were idle, about 3 minutes when other work shared them; the real time is printed once it is done.
  console.log(`First start: building the app (next build), 1 to 4 minutes on two cores; later starts skip this.`);
  const building = Date.now();
  const build = spawnSync(process.execPath, [nextBin, "build"], { stdio: "inherit" });
  if (build.status !== 0) fail("next build failed");
  console.log(`Built in ${took(building)}.`);
}

// No CHAINS: a chain of our own, so that a first run has balances, test funds and allowances. Loaded only then: the
// hardhat node and the contracts' packages are development dependencies.
let testChain: TestChain | undefined;
if (!process.env.CHAINS) {
  console.log("No CHAINS configured: starting a local test chain (hardhat) with the Delegation Framework, test USDC and test prices…");
  const starting = Date.now();
  try {
    testChain = await (await import("../test-chain")).startTestChain();
  } catch (error) {
    fail(`The local test chain did not start: ${(error as Error).message}\nSet CHAINS to use another chain (docs/operations.md).`);
  }
  console.log(
    `Local test chain ${testChain.chainId} ready in ${took(starting)} at ${testChain.rpcUrl}, test USDC at ${testChain.usdc}. ` +
      `It keeps no state: balances reset when the app restarts. Set CHAINS to use real chains instead.`,
  );
}

// server.ts: Next.js, with /mcp served past its routing layer (docs/decisions/0011-mcp-beside-next.md).
const server = spawn(process.execPath, serverArguments(), {
  stdio: "inherit",
  env: {
    ...process.env,
    ...testChain?.settings,
    ...serverEnvironment(),
    PORT: String(settings.port),
    DATA_DIR: settings.dataDir,
    DATABASE_URL: settings.databaseUrl,
    NEXTAUTH_URL: settings.appUrl,
    NEXTAUTH_SECRET: settings.sessionSecret,
  },
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => server.kill(signal));
// The test chain stops with the app.
server.on("exit", async (code) => {
  await testChain?.stop();
  process.exit(code ?? 0);
});

// The address a person opens is APP_URL (behind a proxy, not the port this process listens on): said once it answers.
for (;;) {
  try {
    await fetch(`http://127.0.0.1:${settings.port}/.well-known/oauth-authorization-server`);
    console.log(`Started in ${took(began)}.`);
    console.log(`Agent Wallet is ready: open ${settings.appUrl}`);
    break;
  } catch {
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
