// What a token contract says it is, read from the chain when a request is shown: an ERC-20's symbol and
// decimals, or an NFT collection (ERC-165). A contract that does not answer is an unknown token, never a guess.
import { LRUCache } from "lru-cache";
import { erc20Abi, parseAbi, type Address, type PublicClient } from "viem";
import type { Chain } from "@/lib/config";
import { AppError } from "@/lib/http/errors";
import { chainById, ChainUnansweredError, onChain, quickly } from "./chains";

export type TokenMetadata =
  | { standard: "erc20"; symbol: string; decimals: number }
  | { standard: "erc721"; name: string | null; symbol: string | null }
  | { standard: "erc1155"; name: string | null }
  /** `unread`: the chain gave no answer (in time), which says nothing of the contract; otherwise it answered as no token */
  | { standard: "unknown"; unread?: true };

const erc165Abi = parseAbi(["function supportsInterface(bytes4 interfaceId) view returns (bool)"]);
const ERC721_INTERFACE = "0x80ac58cd";
const ERC1155_INTERFACE = "0xd9b67a26";
const UNREAD: TokenMetadata = { standard: "unknown", unread: true };

/**
 * Throws ChainUnansweredError when the node is silent; a contract that answers a read with an error does not have that
 * function, and an unconfigured chain has no token to read.
 */
async function readMetadata(chainId: number, address: Address): Promise<TokenMetadata> {
  const answer = <T>(read: (client: PublicClient) => Promise<T>): Promise<T | null> =>
    onChain(chainId, read).catch((error: unknown) => {
      if (error instanceof ChainUnansweredError) throw error;
      return null;
    });
  const supports = (interfaceId: `0x${string}`) =>
    answer((client) => client.readContract({ address, abi: erc165Abi, functionName: "supportsInterface", args: [interfaceId] }));
  const [isErc721, isErc1155, name, symbol, decimals] = await Promise.all([
    supports(ERC721_INTERFACE),
    supports(ERC1155_INTERFACE),
    answer((client) => client.readContract({ address, abi: erc20Abi, functionName: "name" })),
    answer((client) => client.readContract({ address, abi: erc20Abi, functionName: "symbol" })),
    answer((client) => client.readContract({ address, abi: erc20Abi, functionName: "decimals" })),
  ]);
  if (isErc721) return { standard: "erc721", name, symbol };
  if (isErc1155) return { standard: "erc1155", name };
  if (symbol !== null && decimals !== null) return { standard: "erc20", symbol, decimals };
  return { standard: "unknown" };
}

async function readToken(chainId: number, address: Address): Promise<TokenMetadata> {
  try {
    return await readMetadata(chainId, address);
  } catch (error) {
    if (error instanceof ChainUnansweredError) return UNREAD;
    throw error;
  }
}

/**
 * Per chain and address, the most recently used 10,000 (agents and forms choose the contracts, and memory must not
 * grow with them), each read shared by every page that asks while it runs: an address asked again costs the chain
 * nothing, whatever it answered. A contract that answered as no token is taken at its word for NO_TOKEN_MS only (one
 * may be deployed there later); an answer the chain did not give (`unread`) is not kept.
 */
const known = new LRUCache<string, Promise<TokenMetadata>>({ max: 10_000 });
const NO_TOKEN_MS = 10 * 60_000;

function sharedRead(key: string, chainId: number, address: Address): Promise<TokenMetadata> {
  const read = readToken(chainId, address);
  known.set(key, read);
  const forget = () => {
    if (known.peek(key) === read) known.delete(key);
  };
  void read.then((metadata) => {
    if (metadata.standard !== "unknown" || known.peek(key) !== read) return;
    if (metadata.unread) forget();
    else known.set(key, read, { ttl: NO_TOKEN_MS });
  }, forget);
  return read;
}

/**
 * The token at `address` on `chainId`, as the chain describes it; unknown when the chain is not configured or does not
 * answer. With `budgetMs`, waits no longer than that: a read still running is then `unread`, and left to finish for
 * the pages that ask next.
 */
export async function tokenMetadata(chainId: number, address: Address, budgetMs?: number): Promise<TokenMetadata> {
  const key = `${chainId}:${address.toLowerCase()}`;
  const reading = known.get(key) ?? sharedRead(key, chainId, address);
  if (budgetMs === undefined) return reading;
  return (await quickly(() => reading, budgetMs)) ?? UNREAD;
}

/** The contract answered, but not as an ERC-20: it has no symbol and decimals to type a cap in. */
class NotAnErc20Error extends AppError {
  constructor(chainId: number, address: string) {
    super("not_an_erc20", `${address} on chain ${chainId} does not answer as an ERC-20 token (no symbol and decimals)`, 422);
  }
}

/**
 * An ERC-20's symbol and decimals, for a form that takes its amounts in the token's units; a typed error when the chain
 * is not configured, gives no answer in time, or the contract is no ERC-20.
 */
export async function erc20Of(chainId: number, address: Address): Promise<{ symbol: string; decimals: number }> {
  chainById(chainId);
  // bounded by the RPC timeout: a person waits on it, and a silent chain is said so
  const metadata = await tokenMetadata(chainId, address);
  if (metadata.standard === "erc20") return { symbol: metadata.symbol, decimals: metadata.decimals };
  if (metadata.standard === "unknown" && metadata.unread) throw new ChainUnansweredError(`Chain ${chainId} did not answer in time`);
  throw new NotAnErc20Error(chainId, address);
}

/** A chain's coin (token null) or an ERC-20 on it. */
export type Asset = { chain: Chain; token: Address | null; symbol: string; decimals: number };

/** An ERC-20 as its contract describes itself, or null when it does not answer as one in time. */
export async function tokenAsset(chain: Chain, token: Address): Promise<Asset | null> {
  const metadata = await quickly(() => tokenMetadata(chain.id, token));
  return metadata?.standard === "erc20" ? { chain, token, symbol: metadata.symbol, decimals: metadata.decimals } : null;
}
