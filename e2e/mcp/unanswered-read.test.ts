// A node that takes a call but never answers it: a real proxy in front of the real local node forwards eth_estimateGas
// and withholds the node's reply. The gas estimate simulates the call, and viem reports its silence inside an error of
// its own, as it does a contract read's: the agent is still told that the node did not answer.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startApp, type RunningApp } from "../support/app";
import { chainsSetting, startChain, type LocalChain } from "../support/chain";
import { keyHolder, type KeyHolder } from "../support/key-holder";
import { countingProxy, type CountingProxy } from "../support/rpc-counter";
import { db } from "@/lib/db";

describe("a node that takes a call but never answers it", { timeout: 120_000 }, () => {
  let chain: LocalChain;
  let proxy: CountingProxy;
  let app: RunningApp;
  let holder: KeyHolder;
  before(async () => {
    chain = await startChain();
    proxy = await countingProxy(chain.rpcUrl, { withhold: ["eth_estimateGas"] });
    app = await startApp({ env: { CHAINS: chainsSetting({ ...chain, rpcUrl: proxy.rpcUrl }) } });
    holder = await keyHolder(app, "unanswered-read@example.com");
  });
  after(async () => {
    await app?.stop();
    await proxy?.stop();
    await chain?.stop();
  });

  it("send_transaction fails with a tool error saying the node did not answer, and no request is made", async () => {
    const before = await db().agentRequest.count();
    const { requestId, refusal } = await holder.ask("send_transaction", { chain_id: 31337, to: holder.signer.address, value: "1000" });
    assert.equal(requestId, undefined);
    assert.ok(proxy.methods.includes("eth_estimateGas"), "the estimate reached the node");
    assert.match(refusal!, /Local dev chain RPC \(chain 31337\) did not answer: The request took too long to respond/);
    assert.equal(await db().agentRequest.count(), before);
  });
});
