// A broadcast whose answer never comes: a real proxy in front of the real local node forwards
// eth_sendRawTransaction and withholds the node's reply. The node holds the transaction, so the request is not
// failed: it stays submitted (counted against the caps) under its own hash, and the receipt settles it once mined.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Hex } from "viem";
import { startApp, type RunningApp } from "../support/app";
import { chainsSetting, startChain, type LocalChain } from "../support/chain";
import { keyHolder, type KeyHolder } from "../support/key-holder";
import { countingProxy, type CountingProxy } from "../support/rpc-counter";
import { mcp } from "../support/oauth";
import type { RequestView } from "@/contract";

describe("a broadcast the node takes but never answers", { timeout: 120_000 }, () => {
  let chain: LocalChain;
  let proxy: CountingProxy;
  let app: RunningApp;
  let holder: KeyHolder;

  const requestView = async (requestId: string) => {
    const reply = (await (
      await mcp(app, holder.apiKey, "tools/call", { name: "get_request", arguments: { request_id: requestId } })
    ).json()) as {
      result: { structuredContent: RequestView };
    };
    return reply.result.structuredContent;
  };

  before(async () => {
    chain = await startChain();
    proxy = await countingProxy(chain.rpcUrl, { withhold: ["eth_sendRawTransaction"] });
    app = await startApp({ env: { CHAINS: chainsSetting({ ...chain, rpcUrl: proxy.rpcUrl }) } });
    holder = await keyHolder(app, "silent-node@example.com");
    await chain.fund(holder.signer.address, "10");
  });
  after(async () => {
    await app?.stop();
    await proxy?.stop();
    await chain?.stop();
  });

  it("stays submitted while the node may hold it, and its receipt settles it", async () => {
    const { requestId, refusal } = await holder.ask("send_transaction", { chain_id: 31337, to: holder.signer.address, value: "1000" });
    assert.ok(requestId, refusal);
    // Mined only when the test says so: the receipt comes later than the broadcast.
    await chain.client.request({ method: "evm_setAutomine" as never, params: [false] as never });
    const approval = await holder.prepareApproval(requestId);
    const answered = await approval.post();
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    assert.equal(answered.body.status, "submitted", "not failed: the node may hold it");
    assert.ok(proxy.methods.includes("eth_sendRawTransaction"), "the transaction reached the node");

    const view = await requestView(requestId);
    assert.equal(view.status, "submitted");
    const hash = view.tx_hash as Hex;
    // The node holds it under the hash the request reports, with the nonce the person signed.
    const pooled = await chain.client.getTransaction({ hash });
    assert.equal(pooled.blockHash, null, "still in the node's pool");
    assert.equal(pooled.nonce, (approval.payload as { transaction: { nonce: number } }).transaction.nonce);

    await chain.client.request({ method: "evm_mine" as never, params: [] as never });
    const settled = await requestView(requestId);
    assert.equal(settled.status, "completed");
    assert.equal((await chain.client.getTransactionReceipt({ hash })).status, "success");
  });

  it("fails once another transaction of its sender takes its nonce, the sender read from the stored signed transaction", async () => {
    await chain.client.request({ method: "evm_setAutomine" as never, params: [false] as never });
    const { requestId, refusal } = await holder.ask("send_transaction", { chain_id: 31337, to: holder.signer.address, value: "2000" });
    assert.ok(requestId, refusal);
    const approval = await holder.prepareApproval(requestId);
    assert.equal((await approval.post()).body.status, "submitted");
    // The same key replaces it in the node's pool, paying more, and the replacement is mined.
    const { transaction } = approval.payload as { transaction: { nonce: number; maxFeePerGas: string; maxPriorityFeePerGas: string } };
    const gwei = 1_000_000_000n;
    const replacement = await holder.signer.signTransaction({
      type: "eip1559",
      chainId: 31337,
      nonce: transaction.nonce,
      to: holder.signer.address,
      value: 0n,
      gas: 21_000n,
      maxFeePerGas: BigInt(transaction.maxFeePerGas) * 2n + gwei,
      maxPriorityFeePerGas: BigInt(transaction.maxPriorityFeePerGas) * 2n + gwei,
    });
    await chain.client.sendRawTransaction({ serializedTransaction: replacement });
    await chain.client.request({ method: "evm_mine" as never, params: [] as never });

    const view = await requestView(requestId);
    assert.equal(view.status, "failed");
    assert.equal(view.reason, "Another transaction used its nonce: it will never be mined");
  });
});
