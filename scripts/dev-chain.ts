// npm run dev:chain: the default local chain (hardhat, chain 31337 on 127.0.0.1:8545) with MetaMask's Delegation
// Framework deployed, for allowances in development. It writes the addresses to data/allowance-frameworks.json and
// prints how to give them to the app (ALLOWANCE_FRAMEWORKS), with hardhat's account 19 as the chain's relayer
// (ALLOWANCE_RELAYERS: `npm start` runs in production, where no chain has a relayer unless configured).
// Stop it with Ctrl-C. Options: --port N (default 8545).
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { deployFramework } from "../e2e/support/delegation-framework";
import { localRelayerKey } from "@/lib/allowances/settings";

const port = Number(process.argv[process.argv.indexOf("--port") + 1] || 8545) || 8545;
const hardhat = createRequire(import.meta.url).resolve("hardhat/internal/cli/bootstrap");
const node = spawn(
  process.execPath,
  [hardhat, "node", "--hostname", "127.0.0.1", "--port", String(port), "--config", path.resolve("e2e/support/hardhat/hardhat.config.cjs")],
  { env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: "true" }, stdio: ["ignore", "pipe", "inherit"] },
);
process.on("SIGINT", () => node.kill("SIGTERM"));
process.on("SIGTERM", () => node.kill("SIGTERM"));
node.on("exit", (code) => process.exit(code ?? 0));

let output = "";
node.stdout.on("data", async function ready(chunk: Buffer) {
  output += chunk;
  if (!output.includes("Started HTTP")) return;
  node.stdout.off("data", ready);
  node.stdout.resume();
  const environment = await deployFramework({ rpcUrl: `http://127.0.0.1:${port}`, chainId: 31337 });
  const file = path.resolve(process.env.DATA_DIR || "data", "allowance-frameworks.json");
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ 31337: environment }));
  console.log(
    `Local chain 31337 on http://127.0.0.1:${port}, Delegation Framework deployed (DelegationManager ${environment.DelegationManager}).`,
  );
  const relayers = JSON.stringify({ 31337: localRelayerKey() });
  console.log(
    `Start the app with: ALLOWANCE_FRAMEWORKS="$(cat ${path.relative(process.cwd(), file)})" ALLOWANCE_RELAYERS='${relayers}' npm start`,
  );
});
