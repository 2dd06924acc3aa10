// Prices from Chainlink aggregators, read through the chain's own RPC (docs/decisions/0018-balances-and-prices.md).
// A feed that is not configured, does not answer in time, reverts, is stale or answers zero or less gives no price:
// the page then shows no value in money, never a guess.
import { LRUCache } from "lru-cache";
import { parseAbi, type Address } from "viem";
import { config } from "@/lib/config";
import { systemClock, type Clock } from "@/lib/clock";
import { onChain, quickly } from "@/lib/wallet/chains";
import type { Price } from "./format";

const aggregatorAbi = parseAbi([
  "function decimals() view returns (uint8)",
  "function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)",
]);

/** The aggregator configured for the chain's coin (token null) or for a token, if any. */
function feedOf(chainId: number, token: Address | null): Address | null {
  const feeds = config().prices.feeds[String(chainId)];
  if (!feeds) return null;
  return (token === null ? feeds.native : feeds.tokens[token.toLowerCase() as Address]) ?? null;
}

/** A price is worth showing only while it is fresh and positive. */
export function usablePrice(
  round: { answer: bigint; updatedAt: bigint },
  decimals: number,
  now: Date,
  maxAgeSeconds: number,
): Price | null {
  if (round.answer <= 0n || round.updatedAt === 0n) return null;
  if (BigInt(Math.floor(now.getTime() / 1000)) - round.updatedAt > BigInt(maxAgeSeconds)) return null;
  return { answer: round.answer, decimals };
}

async function readFeed(chainId: number, feed: Address, clock: Clock): Promise<Price | null> {
  const [decimals, [, answer, , updatedAt]] = await onChain(chainId, (client) =>
    Promise.all([
      client.readContract({ address: feed, abi: aggregatorAbi, functionName: "decimals" }),
      client.readContract({ address: feed, abi: aggregatorAbi, functionName: "latestRoundData" }),
    ]),
  );
  return usablePrice({ answer, updatedAt }, decimals, clock(), config().prices.maxAgeSeconds);
}

/** Shared for a few seconds: one page shows several amounts in the same asset, and refreshes while it waits. */
const recent = new LRUCache<string, Promise<Price | null>>({ max: 1_000, ttl: 5_000 });

/** The price of the chain's coin (token null) or of a token in PRICE_CURRENCY, or null: none, unreadable, stale. */
export function priceOf(chainId: number, token: Address | null, clock: Clock = systemClock): Promise<Price | null> {
  const feed = feedOf(chainId, token);
  if (!feed) return Promise.resolve(null);
  const key = `${chainId}:${feed}`;
  let price = recent.get(key);
  if (!price) {
    const reading = quickly(() => readFeed(chainId, feed, clock));
    recent.set(key, reading);
    // No price is not kept: a feed that was slow once (a cold start) is asked again by the next page.
    void reading.then((answer) => {
      if (answer === null && recent.peek(key) === reading) recent.delete(key);
    });
    price = reading;
  }
  return price;
}

/** The currency prices are in (ISO 4217). */
export function priceCurrency(): string {
  return config().prices.currency;
}
