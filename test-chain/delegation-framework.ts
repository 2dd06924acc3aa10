// MetaMask's Delegation Framework on the tests' local chain: `deploySmartAccountsEnvironment` deploys every contract
// (about 40 transactions) from one of the node's funded accounts, and the app learns the addresses through
// ALLOWANCE_FRAMEWORKS, as an operator's local chain does (`npm run dev:chain`).
import { createPublicClient, createWalletClient, http } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { chainDefinition, type LocalChain } from "./node";

// The kit sends usage telemetry unless told not to; this must be set before its first call.
process.env.DO_NOT_TRACK = "1";

export type FrameworkEnvironment = Awaited<ReturnType<typeof import("@metamask/smart-accounts-kit/utils").deploySmartAccountsEnvironment>>;

/** Hardhat's development mnemonic; account 18 deploys (account 19 is the app's default relayer on chain 31337). */
const DEPLOYER = mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: 18 });

export async function deployFramework(chain: { rpcUrl: string; chainId: number }): Promise<FrameworkEnvironment> {
  const { deploySmartAccountsEnvironment } = await import("@metamask/smart-accounts-kit/utils");
  const definition = chainDefinition(chain);
  const wallet = createWalletClient({ account: DEPLOYER, chain: definition, transport: http(chain.rpcUrl) });
  const client = createPublicClient({ chain: definition, transport: http(chain.rpcUrl) });
  return deploySmartAccountsEnvironment(wallet as never, client as never, definition);
}

/** The ALLOWANCE_FRAMEWORKS setting for this chain. */
export function frameworksSetting(chain: LocalChain | { chainId: number }, environment: FrameworkEnvironment): string {
  return JSON.stringify({ [chain.chainId]: environment });
}
