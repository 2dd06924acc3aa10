// Contracts deployed on the local chain with viem from one of the node's funded accounts (hardhat unlocks it: the
// node signs), for the test chain's own contracts and the tests'.
import { createWalletClient, getAddress, http, type Abi, type Address, type Hex } from "viem";
import { chainDefinition, type LocalChain } from "./node";

export type Artifact = { abi: Abi; bytecode: Hex };

/** A wallet client for the node's first funded account (hardhat unlocks it: the node signs). */
export async function deployer(chain: LocalChain) {
  const [account] = await createWalletClient({ transport: http(chain.rpcUrl) }).getAddresses();
  const definition = chainDefinition(chain);
  return createWalletClient({ account, chain: definition, transport: http(chain.rpcUrl) });
}

export async function mined(chain: LocalChain, hash: Hex): Promise<Address | null | undefined> {
  const receipt = await chain.client.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`transaction ${hash} reverted`);
  return receipt.contractAddress;
}

/** `contract` deployed by the node's first account with `args`: its address. */
export async function deploy(chain: LocalChain, contract: Artifact, args: unknown[]): Promise<Address> {
  const wallet = await deployer(chain);
  const address = await mined(chain, await wallet.deployContract({ abi: contract.abi, bytecode: contract.bytecode, args }));
  if (!address) throw new Error("the deployment created no contract");
  return getAddress(address);
}
