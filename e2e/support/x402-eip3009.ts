// The real `@x402/evm` facilitator for the exact scheme's eip3009 and permit2 transfers on the tests' local chain:
// `ExactEvmScheme` with `toFacilitatorEvmSigner` over a viem client (its signer also needs getCode), in `@x402/core`'s
// x402Facilitator, handed to `@x402/express` as its FacilitatorClient. Its key is a fresh one, funded for gas: it
// submits the person's TransferWithAuthorization (or their Permit2 transfer, to x402's proxy: permit2.ts) and pays its
// gas.
import { x402Facilitator } from "@x402/core/facilitator";
import type { FacilitatorClient } from "@x402/core/server";
import type { Network, SupportedResponse } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { fundedWallet, type LocalChain } from "./chain";

export async function startEip3009Facilitator(chain: LocalChain): Promise<FacilitatorClient> {
  const client = await fundedWallet(chain);
  const signer = toFacilitatorEvmSigner({
    address: client.account.address,
    readContract: (args) => client.readContract(args as Parameters<typeof client.readContract>[0]),
    verifyTypedData: (args) => client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
    writeContract: (args) => client.writeContract(args as Parameters<typeof client.writeContract>[0]),
    sendTransaction: (args) => client.sendTransaction(args),
    waitForTransactionReceipt: (args) => client.waitForTransactionReceipt(args),
    getCode: (args) => client.getCode(args),
  });
  const facilitator = new x402Facilitator().register(`eip155:${chain.chainId}` as Network, new ExactEvmScheme(signer));
  return {
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: (payload, requirements) => facilitator.settle(payload, requirements),
    getSupported: async () => facilitator.getSupported() as SupportedResponse,
  };
}
