// A real local EVM JSON-RPC node (hardhat's), started on loopback for a test file.
import { spawn } from "node:child_process";
import { createServer, type ServerResponse } from "node:http";
import path from "node:path";
import { createRequire } from "node:module";
import { createPublicClient, createWalletClient, defineChain, http, parseEther, publicActions, type PublicClient } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { freePort } from "./app";

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
  /** Holds every block while `work` runs (what is sent waits in the mempool), then mines one and goes on as before. */
  holdingBlocks: <T>(work: () => Promise<T>) => Promise<T>;
  stop: () => Promise<void>;
};

/**
 * A hardhat node on a free port (or `port`); `chainId` gives it another id than 31337 (a second chain). It keeps no
 * state: stopped, its chain is gone.
 */
export async function startChain(options: { chainId?: number; port?: number } = {}): Promise<LocalChain> {
  const chainId = options.chainId ?? 31337;
  const port = options.port ?? (await freePort());
  const hardhat = createRequire(import.meta.url).resolve("hardhat/internal/cli/bootstrap");
  const child = spawn(
    process.execPath,
    [
      hardhat,
      "node",
      "--hostname",
      "127.0.0.1",
      "--port",
      String(port),
      "--config",
      path.resolve("e2e/support/hardhat/hardhat.config.cjs"),
    ],
    {
      env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: "true", HARDHAT_CHAIN_ID: String(chainId) },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`hardhat node did not start:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (output.includes("Started HTTP")) {
        clearTimeout(timer);
        // The node logs every call from now on: read and dropped, so a node running for days holds no log.
        child.stdout.off("data", onData).resume();
        child.stderr.off("data", onData).resume();
        resolve();
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", () => reject(new Error(`hardhat node exited:\n${output}`)));
  });
  await ready;
  const rpcUrl = `http://127.0.0.1:${port}`;
  const client = createPublicClient({ transport: http(rpcUrl) });
  const ask = (method: string, params: unknown[] = []) => client.request({ method: method as never, params: params as never });
  /** The block interval once mineEvery was called; null while the node mines each transaction at once. */
  let intervalMs: number | null = null;
  const mining = (on: boolean) =>
    intervalMs === null ? ask("evm_setAutomine", [on]) : ask("evm_setIntervalMining", [on ? intervalMs : 0]);
  return {
    rpcUrl,
    chainId,
    client,
    fund: async (address, ether) => {
      await ask("hardhat_setBalance", [address, `0x${parseEther(ether).toString(16)}`]);
    },
    mineEvery: async (ms) => {
      await ask("evm_setAutomine", [false]);
      await ask("evm_setIntervalMining", [ms]);
      intervalMs = ms;
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

/** A fresh key funded with 1 ETH for gas, as a wallet client that also reads the chain. */
export async function fundedWallet(chain: LocalChain) {
  const account = privateKeyToAccount(generatePrivateKey());
  await chain.fund(account.address, "1");
  return createWalletClient({ account, chain: chainDefinition(chain), transport: http(chain.rpcUrl) }).extend(publicActions);
}

/** The CHAINS setting that points the app at this node (with a block explorer's address when given). */
export function chainsSetting(chain: LocalChain, options: { explorerUrl?: string; tokens?: string[] } = {}): string {
  return JSON.stringify([{ id: chain.chainId, name: "Local dev chain", rpcUrl: chain.rpcUrl, symbol: "ETH", ...options }]);
}

export type StallingRpc = {
  url: string;
  /** From now on every request is held open and never answered: a node that hangs. */
  stall: () => void;
  /** From now on every connection is closed unanswered: a node that cannot be reached. */
  cut: () => void;
  /** Passes requests on again. */
  resume: () => void;
  close: () => Promise<void>;
};

/** A JSON-RPC endpoint on loopback that passes requests on to `chain` until it is told to stall or to cut them. */
export async function stallingRpc(chain: LocalChain): Promise<StallingRpc> {
  let mode: "pass" | "stall" | "cut" = "pass";
  const held = new Set<ServerResponse>();
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (mode === "cut") {
      request.socket.destroy();
      return;
    }
    if (mode === "stall") {
      held.add(response);
      return;
    }
    const answer = await fetch(chain.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: Buffer.concat(chunks),
    });
    response.writeHead(answer.status, { "content-type": "application/json" }).end(Buffer.from(await answer.arrayBuffer()));
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    stall: () => {
      mode = "stall";
    },
    cut: () => {
      mode = "cut";
      server.closeAllConnections();
    },
    resume: () => {
      mode = "pass";
    },
    close: async () => {
      for (const response of held) response.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
