// What a token contract says it is, read from the chain when a request is shown: an ERC-20's symbol and
// decimals, or an NFT collection (ERC-165). A contract that does not answer is an unknown token, never a guess.
import { LRUCache } from "lru-cache";
import { erc20Abi, parseAbi, type Address, type PublicClient } from "viem";
import { AppError } from "@/lib/http/errors";
import { onChain } from "./chains";

export type TokenMetadata =
  | { standard: "erc20"; symbol: string; decimals: number }
  | { standard: "erc721"; name: string | null; symbol: string | null }
  | { standard: "erc1155"; name: string | null }
  | { standard: "unknown" };

const erc165Abi = parseAbi(["function supportsInterface(bytes4 interfaceId) view returns (bool)"]);
const ERC721_INTERFACE = "0x80ac58cd";
const ERC1155_INTERFACE = "0xd9b67a26";

/**
 * Per chain and address, the most recently used 10,000: agents choose the contracts, and memory must not grow with
 * them. Unknown answers are not kept: the chain may have been unreachable, or the contract not yet there.
 */
const known = new LRUCache<string, TokenMetadata>({ max: 10_000 });

async function readMetadata(client: PublicClient, address: Address): Promise<TokenMetadata> {
  const answer = async <T>(read: Promise<T>): Promise<T | null> => read.catch(() => null);
  const supports = (interfaceId: `0x${string}`) =>
    answer(client.readContract({ address, abi: erc165Abi, functionName: "supportsInterface", args: [interfaceId] }));
  const [isErc721, isErc1155, name, symbol, decimals] = await Promise.all([
    supports(ERC721_INTERFACE),
    supports(ERC1155_INTERFACE),
    answer(client.readContract({ address, abi: erc20Abi, functionName: "name" })),
    answer(client.readContract({ address, abi: erc20Abi, functionName: "symbol" })),
    answer(client.readContract({ address, abi: erc20Abi, functionName: "decimals" })),
  ]);
  if (isErc721) return { standard: "erc721", name, symbol };
  if (isErc1155) return { standard: "erc1155", name };
  if (symbol !== null && decimals !== null) return { standard: "erc20", symbol, decimals };
  return { standard: "unknown" };
}

/** The token at `address` on `chainId`, as the chain describes it; unknown when the chain is not configured or does not answer. */
export async function tokenMetadata(chainId: number, address: Address): Promise<TokenMetadata> {
  const key = `${chainId}:${address.toLowerCase()}`;
  const cached = known.get(key);
  if (cached) return cached;
  let metadata: TokenMetadata;
  try {
    metadata = await onChain(chainId, (client) => readMetadata(client, address));
  } catch (error) {
    if (error instanceof AppError) return { standard: "unknown" };
    throw error;
  }
  if (metadata.standard !== "unknown") known.set(key, metadata);
  return metadata;
}
