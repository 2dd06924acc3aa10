// Real token contracts on the local chain: OpenZeppelin's compiled presets (an installed dev dependency, so
// nothing is downloaded), deployed with viem from one of the node's funded accounts.
import { createRequire } from "node:module";
import { parseAbi, type Address } from "viem";
import { deploy, deployer, mined, type Artifact } from "@/test-chain/contracts";
import type { LocalChain } from "@/test-chain/node";

export { deploy, deployer, mined } from "@/test-chain/contracts";

const require = createRequire(import.meta.url);
const erc20Preset = require("@openzeppelin/contracts/build/contracts/ERC20PresetFixedSupply.json") as Artifact;
const erc721Preset = require("@openzeppelin/contracts/build/contracts/ERC721PresetMinterPauserAutoId.json") as Artifact;
const erc1155Preset = require("@openzeppelin/contracts/build/contracts/ERC1155PresetMinterPauser.json") as Artifact;

/** An ERC-20 (18 decimals) whose whole supply belongs to `holder`. */
export function deployErc20(chain: LocalChain, token: { name: string; symbol: string; supply: bigint; holder: Address }) {
  return deploy(chain, erc20Preset, [token.name, token.symbol, token.supply, token.holder]);
}

/** An ERC-721 collection with one token minted to each of `holders`, ids from 0 in that order. */
export async function deployErc721(chain: LocalChain, collection: { name: string; symbol: string; holders: Address[] }) {
  const address = await deploy(chain, erc721Preset, [collection.name, collection.symbol, "https://nft.invalid/"]);
  const wallet = await deployer(chain);
  for (const holder of collection.holders) {
    await mined(chain, await wallet.writeContract({ address, abi: erc721Preset.abi, functionName: "mint", args: [holder] }));
  }
  return address;
}

/** An ERC-1155 collection with `amount` of token `id` minted to `holder`. */
export async function deployErc1155(chain: LocalChain, mint: { id: bigint; amount: bigint; holder: Address }) {
  const address = await deploy(chain, erc1155Preset, ["https://items.invalid/{id}.json"]);
  const wallet = await deployer(chain);
  await mined(
    chain,
    await wallet.writeContract({ address, abi: erc1155Preset.abi, functionName: "mint", args: [mint.holder, mint.id, mint.amount, "0x"] }),
  );
  return address;
}

/** Mints `amount` of a FiatToken (Circle's USDC, deployed by deployFiatToken, whose deployer is its minter) to `to`. */
export async function mintFiatToken(chain: LocalChain, token: Address, to: Address, amount: bigint) {
  const minter = await deployer(chain);
  const abi = parseAbi(["function mint(address to, uint256 amount) returns (bool)"]);
  await mined(chain, await minter.writeContract({ address: token, abi, functionName: "mint", args: [to, amount] }));
}
