// The local chain in tests: the product's node (test-chain/node.ts), and what only tests use beside it — a funded
// wallet, the CHAINS setting for it, an endpoint that stalls or cuts the node.
import { createServer, type ServerResponse } from "node:http";
import { createWalletClient, http, publicActions } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { chainDefinition, freePort, type LocalChain } from "@/test-chain/node";

export { chainDefinition, startChain, type LocalChain } from "@/test-chain/node";

/** A fresh key funded with 1 ETH for gas, as a wallet client that also reads the chain. */
export async function fundedWallet(chain: LocalChain) {
  const account = privateKeyToAccount(generatePrivateKey());
  await chain.fund(account.address, "1");
  return createWalletClient({ account, chain: chainDefinition(chain), transport: http(chain.rpcUrl) }).extend(publicActions);
}

/** The CHAINS setting that points the app at this node (with a block explorer's address when given). */
export function chainsSetting(chain: LocalChain, options: { explorerUrl?: string; tokens?: string[]; l1Fees?: "op-stack" } = {}): string {
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
