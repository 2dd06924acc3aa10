// The relayer's fees, read raw in one exchange with the node, are the fees viem's estimateFeesPerGas sets: on a real
// node, before and after the base fee moves.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createPublicClient, createWalletClient, http, parseEther, parseGwei, type PublicClient } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { feesNow } from "@/lib/allowances/fees";
import { jsonRpcTransport } from "@/lib/wallet/rpc-transport";
import { startChain, type LocalChain } from "../support/chain";

let chain: LocalChain;

before(async () => {
  chain = await startChain();
});

after(async () => {
  await chain?.stop();
});

/** feesNow's fees are viem's, beside the latest block's base fee. */
async function assertViemsFees(client: PublicClient) {
  const { baseFeePerGas, ...fees } = await feesNow(client);
  assert.deepEqual(fees, await client.estimateFeesPerGas());
  assert.equal(baseFeePerGas, (await client.getBlock()).baseFeePerGas);
}

describe("relayer fees", () => {
  it("are viem's estimateFeesPerGas, as the base fee moves", async () => {
    const client = createPublicClient({ transport: jsonRpcTransport(chain.rpcUrl, { timeoutMs: 5_000 }) });
    await assertViemsFees(client);
    // Each block below its gas target lowers the next base fee.
    const wallet = createWalletClient({
      account: mnemonicToAccount("test test test test test test test test test test test junk"),
      transport: http(chain.rpcUrl),
    });
    const before = (await client.getBlock()).baseFeePerGas!;
    for (let block = 0; block < 3; block++)
      await wallet.sendTransaction({
        chain: null,
        to: wallet.account.address,
        value: parseEther("0.001"),
        maxFeePerGas: parseGwei("100"),
      });
    assert.notEqual((await client.getBlock()).baseFeePerGas, before, "the base fee moved");
    await assertViemsFees(client);
  });
});
