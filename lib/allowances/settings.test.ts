// Which chains offer allowances, and who relays on them. The settings are read once a process: each case runs in its
// own.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from "viem/accounts";
import { testFramework } from "./framework.fixture";

const HARDHAT_ACCOUNT_19 = mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: 19 }).address;

/** relayerAccount(31337) and allowanceChains() in a process with `env`, the default chain 31337 and a framework on it. */
function onLocalChain(env: Record<string, string>): { relayer: string | null; chains: number[] } {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aw-settings-"));
  const script = `
    const { relayerAccount, allowanceChains } = await import(${JSON.stringify(path.resolve("lib/allowances/settings.ts"))});
    console.log(JSON.stringify({ relayer: relayerAccount(31337)?.address ?? null, chains: allowanceChains().map((chain) => chain.id) }));`;
  // Nothing of this process's environment but PATH: no NODE_ENV, no relayer, unless the case sets them.
  const childEnv: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    DATA_DIR: dataDir,
    ALLOWANCE_FRAMEWORKS: JSON.stringify({ 31337: testFramework }),
    ...env,
  };
  try {
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "--eval", script], {
      env: childEnv as NodeJS.ProcessEnv,
      encoding: "utf8",
    });
    assert.equal(run.status, 0, run.stderr);
    return JSON.parse(run.stdout) as { relayer: string | null; chains: number[] };
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

describe("the local chain's relayer", () => {
  it("in production (NODE_ENV=production, or unset) hardhat's public account relays nothing: chain 31337 offers no allowance", () => {
    for (const env of [{ NODE_ENV: "production" }, {}] as Record<string, string>[]) {
      assert.deepEqual(onLocalChain(env), { relayer: null, chains: [] }, JSON.stringify(env));
    }
  });

  it("in production a configured ALLOWANCE_RELAYERS key relays, and the chain offers allowances", () => {
    const key = generatePrivateKey();
    assert.deepEqual(onLocalChain({ NODE_ENV: "production", ALLOWANCE_RELAYERS: JSON.stringify({ 31337: key }) }), {
      relayer: privateKeyToAccount(key).address,
      chains: [31337],
    });
  });

  it("in development hardhat's account 19 relays by default", () => {
    assert.deepEqual(onLocalChain({ NODE_ENV: "development" }), { relayer: HARDHAT_ACCOUNT_19, chains: [31337] });
  });
});
