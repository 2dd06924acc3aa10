import { describe, it } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { erc20Abi } from "viem";
import { ChainUnansweredError, onChain, quickly } from "./chains";

describe("quickly", () => {
  it("gives the answer, or null when the read fails or outlasts the budget", async () => {
    assert.equal(await quickly(async () => 7), 7);
    assert.equal(await quickly(() => Promise.reject(new Error("node down"))), null);
    assert.equal(await quickly(() => new Promise(() => {}), 10), null);
  });
});

describe("onChain", () => {
  it("a contract read from a node that is not there is the node's silence, named, whatever viem wraps it in", async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    // Read once, when onChain first asks for the chain.
    process.env.CHAINS = JSON.stringify([{ id: 31337, name: "Offline chain", rpcUrl: `http://127.0.0.1:${closedPort}`, symbol: "ETH" }]);
    const read = onChain(31337, (client) =>
      client.readContract({ address: "0x5FbDB2315678afecb367f032d93F642f64180aa3", abi: erc20Abi, functionName: "decimals" }),
    );
    await assert.rejects(read, (error: unknown) => {
      assert.ok(error instanceof ChainUnansweredError, String(error));
      assert.equal(error.code, "chain_error");
      assert.equal(error.status, 502);
      assert.match(error.message, /^The Offline chain RPC \(chain 31337\) did not answer: HTTP request failed/);
      return true;
    });
  });
});
