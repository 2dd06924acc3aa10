import { readableDecimal } from "@/lib/prices/format";

/**
 * An amount as people read it ("9.9 ETH"), the exact decimal one tap away when that is shorter than it
 * ("exactly 9.899968500000000001 ETH"). For what a wallet holds, never for what is signed, which is always shown whole.
 * `after` follows the amount on its line (its value in money), inside the part that is tapped.
 */
export function ReadableAmount({ exact, symbol, after = "" }: { exact: string; symbol: string; after?: string }) {
  const short = readableDecimal(exact);
  if (short === exact) return `${exact} ${symbol}${after}`;
  return (
    <details className="exact-amount">
      <summary title={`exactly ${exact} ${symbol}`}>{`${short} ${symbol}${after}`}</summary>
      <span className="mono small">
        exactly {exact} {symbol}
      </span>
    </details>
  );
}
