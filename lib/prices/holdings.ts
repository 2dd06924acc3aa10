// What a wallet holds, for the pages where a person decides: the coin of each chain and the tokens they follow,
// each with its value when a feed gives one. Every read is bounded (feeds.ts): what does not answer in time is
// "unavailable", and the page goes on without it.
import { erc20Abi, type Address } from "viem";
import { config, type Chain } from "@/lib/config";
import { db } from "@/lib/db";
import { onChain, quickly } from "@/lib/wallet/chains";
import { tokenAsset, type Asset } from "@/lib/wallet/token-metadata";
import { priceCurrency, priceOf } from "./feeds";
import { amountWithMoney, moneyText, type Price } from "./format";
import type { NamedAmount } from "@/lib/wallet/headline";
import type { PickableToken } from "@/lib/wallet/policy-presets";

/** An asset's balance in a wallet (null: could not be read in time) and its price (null: none to show). */
export type Holding = Asset & { balance: bigint | null; price: Price | null };

/** How many followed tokens a page reads, most recently named first. */
const FOLLOWED_LIMIT = 8;

/**
 * The tokens a person follows: those their agents' requests named (a token transfer or approval), most recent first,
 * on chains still configured. No list to keep: asking about a token is what puts it on the person's pages.
 */
async function followedTokens(userId: string): Promise<{ chainId: number; token: Address }[]> {
  // Grouped in the database: a person's many requests are not read to find a few tokens.
  const rows = await db().agentRequest.groupBy({
    by: ["chainId", "tokenAddress"],
    where: { userId, tokenAddress: { not: null }, chainId: { in: config().chains.map((chain) => chain.id) } },
    _max: { createdAt: true },
    orderBy: { _max: { createdAt: "desc" } },
    take: FOLLOWED_LIMIT,
  });
  return rows.map((row) => ({ chainId: row.chainId!, token: row.tokenAddress as Address }));
}

/** The coin of a configured chain. */
export function coinOf(chain: Chain): Asset {
  return { chain, token: null, symbol: chain.symbol, decimals: 18 };
}

async function balanceOf(address: Address, asset: Asset): Promise<bigint | null> {
  return quickly(() =>
    onChain(asset.chain.id, (client) =>
      asset.token === null
        ? client.getBalance({ address })
        : client.readContract({ address: asset.token, abi: erc20Abi, functionName: "balanceOf", args: [address] }),
    ),
  );
}

/** The wallet's balance of each asset, with its price; all read at once, none waiting longer than the budget. */
export async function holdingsOf(address: Address, assets: Asset[]): Promise<Holding[]> {
  return Promise.all(
    assets.map(async (asset) => {
      const [balance, price] = await Promise.all([balanceOf(address, asset), priceOf(asset.chain.id, asset.token)]);
      return { ...asset, balance, price };
    }),
  );
}

/**
 * Every configured chain's coin, the tokens each chain lists (CHAINS' `tokens`) and every token the person follows, as
 * the chains describe them, each once.
 */
export async function walletAssets(userId: string): Promise<Asset[]> {
  const chains = config().chains;
  const listed = chains.flatMap((chain) => (chain.tokens ?? []).map((token) => ({ chainId: chain.id, token: token as Address })));
  const named = new Set(listed.map(({ chainId, token }) => `${chainId}:${token.toLowerCase()}`));
  const followed = (await followedTokens(userId)).filter(({ chainId, token }) => !named.has(`${chainId}:${token.toLowerCase()}`));
  const tokens = await Promise.all(
    [...listed, ...followed].map(({ chainId, token }) =>
      tokenAsset(
        chains.find((chain) => chain.id === chainId)!,
        token,
      ),
    ),
  );
  return [...chains.map(coinOf), ...tokens.filter((asset) => asset !== null)];
}

/** The tokens among a wallet's assets, as the limits and allowance forms offer them by name (consent, /clients). */
export function pickableTokens(assets: Asset[]): PickableToken[] {
  return assets.flatMap(({ chain, token, symbol, decimals }) => (token ? [{ chainId: chain.id, address: token, symbol, decimals }] : []));
}

/**
 * Each amount whose asset has a price, with its value: "0.1 ETH (≈ $200.00)". A list of many requests asks once per
 * feed, not once per amount: priceOf shares each feed's read (feeds.ts).
 */
export async function valuedAmounts(amounts: NamedAmount[]): Promise<string[]> {
  const prices = await Promise.all(amounts.map((named) => priceOf(named.chainId, named.token)));
  return amounts.flatMap((named, index) => {
    const price = prices[index];
    return price ? [amountWithMoney(named.units, moneyText(named.amount, named.decimals, price, priceCurrency()))] : [];
  });
}
