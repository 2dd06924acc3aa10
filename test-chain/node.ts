// The local EVM node the product runs when no chain is configured (npm start, npm run dev:chain: test-chain/index.ts)
// and the tests start: hardhat's, on loopback, keeping no state (or foundry's anvil, beside it in the benchmark).
import { spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { createRequire } from "node:module";
import { createPublicClient, defineChain, http, parseEther, type PublicClient } from "viem";

/** A port free on loopback now, for a server about to listen on it. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export type LocalChain = {
  rpcUrl: string;
  chainId: number;
  client: PublicClient;
  fund: (address: string, ether: string) => Promise<void>;
  /**
   * Mines as a real chain does from now on: a block every `ms` milliseconds, transactions waiting in the mempool until
   * then (hardhat's interval mining); until it is called, each transaction is mined the instant it arrives.
   */
  mineEvery: (ms: number) => Promise<void>;
  /**
   * On a chain that mines each transaction the instant it arrives: mines as mineEvery says while `work` runs, then
   * mines what waits in the mempool and each transaction the instant it arrives again.
   */
  miningEvery: <T>(ms: number, work: () => Promise<T>) => Promise<T>;
  /** Holds every block while `work` runs (what is sent waits in the mempool), then mines one and goes on as before. */
  holdingBlocks: <T>(work: () => Promise<T>) => Promise<T>;
  /**
   * Returns once the latest block is `number` or later: the blocks missing are mined at once while the node mines each
   * transaction as it arrives (nothing else would mine them), and waited for while it mines every interval.
   */
  untilBlock: (number: bigint) => Promise<void>;
  stop: () => Promise<void>;
};

/**
 * Which node: hardhat's (what npm start and the tests run: an EVM in JavaScript that answers one request at a time), or
 * foundry's anvil (in Rust, answering side by side as a production node does), for the benchmark to tell the product's
 * limits from the local node's. Both start with the same funded accounts, a block of 60M gas and Prague's rules.
 */
export type ChainNode = "hardhat" | "anvil";

/** anvil's binary, from its npm package for this platform (`@foundry-rs/anvil`'s optional dependencies). */
function anvilBinary(): string {
  const arch = { x64: "amd64", arm64: "arm64" }[process.arch as string];
  const name = `@foundry-rs/anvil-${process.platform}-${arch}/package.json`;
  return path.join(path.dirname(createRequire(import.meta.url).resolve(name)), "bin", "anvil");
}

function spawnNode(node: ChainNode, port: number, chainId: number) {
  if (node === "anvil") {
    const flags = ["--host", "127.0.0.1", "--port", String(port), "--chain-id", String(chainId), "--hardfork", "prague"];
    return spawn(anvilBinary(), [...flags, "--accounts", "20", "--gas-limit", "60000000"], { stdio: ["ignore", "pipe", "pipe"] });
  }
  const hardhat = createRequire(import.meta.url).resolve("hardhat/internal/cli/bootstrap");
  return spawn(
    process.execPath,
    [hardhat, "node", "--hostname", "127.0.0.1", "--port", String(port), "--config", path.resolve("test-chain/hardhat.config.cjs")],
    {
      env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: "true", HARDHAT_CHAIN_ID: String(chainId) },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
}

/**
 * A hardhat node (or `node`) on a free port (or `port`); `chainId` gives it another id than 31337 (a second chain). It
 * keeps no state: stopped, its chain is gone.
 */
export async function startChain(options: { chainId?: number; port?: number; node?: ChainNode } = {}): Promise<LocalChain> {
  const chainId = options.chainId ?? 31337;
  const port = options.port ?? (await freePort());
  const node = options.node ?? "hardhat";
  const child = spawnNode(node, port, chainId);
  let output = "";
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${node} node did not start:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (output.includes(node === "anvil" ? "Listening on" : "Started HTTP")) {
        clearTimeout(timer);
        // The node logs every call from now on: read and dropped, so a node running for days holds no log.
        child.stdout.off("data", onData).resume();
        child.stderr.off("data", onData).resume();
        resolve();
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", () => reject(new Error(`${node} node exited:\n${output}`)));
  });
  await ready;
  const rpcUrl = `http://127.0.0.1:${port}`;
  const client = createPublicClient({ transport: http(rpcUrl) });
  const ask = (method: string, params: unknown[] = []) => client.request({ method: method as never, params: params as never });
  /** The block interval once mineEvery was called; null while the node mines each transaction at once. */
  let intervalMs: number | null = null;
  // hardhat takes the interval in milliseconds, anvil in seconds
  const interval = (ms: number) => (node === "anvil" ? ms / 1000 : ms);
  const mining = (on: boolean) =>
    intervalMs === null ? ask("evm_setAutomine", [on]) : ask("evm_setIntervalMining", [on ? interval(intervalMs) : 0]);
  const mineEvery = async (ms: number) => {
    if (node === "anvil" && ms % 1000) throw new Error("anvil mines at whole seconds");
    await ask("evm_setAutomine", [false]);
    await ask("evm_setIntervalMining", [interval(ms)]);
    intervalMs = ms;
  };
  return {
    rpcUrl,
    chainId,
    client,
    fund: async (address, ether) => {
      await ask("hardhat_setBalance", [address, `0x${parseEther(ether).toString(16)}`]);
    },
    mineEvery,
    miningEvery: async (ms, work) => {
      await mineEvery(ms);
      try {
        return await work();
      } finally {
        await ask("evm_setIntervalMining", [0]);
        intervalMs = null;
        await ask("evm_mine");
        await ask("evm_setAutomine", [true]);
      }
    },
    holdingBlocks: async (work) => {
      await mining(false);
      try {
        return await work();
      } finally {
        await ask("evm_mine");
        await mining(true);
      }
    },
    untilBlock: async (number) => {
      const latest = () => client.getBlockNumber({ cacheTime: 0 });
      for (let at = await latest(); at < number; at = await latest()) {
        if (intervalMs === null) await ask("hardhat_mine", [`0x${(number - at).toString(16)}`]);
        else await new Promise((resolve) => setTimeout(resolve, intervalMs! / 4));
      }
    },
    stop: async () => {
      child.kill("SIGTERM");
      await new Promise((resolve) => setTimeout(resolve, 100));
      if (child.exitCode === null) child.kill("SIGKILL");
    },
  };
}

/** The node's chain as viem defines one, for wallet clients that sign and send on it. */
export function chainDefinition(chain: { rpcUrl: string; chainId: number }) {
  return defineChain({
    id: chain.chainId,
    name: "Local dev chain",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [chain.rpcUrl] } },
  });
}
