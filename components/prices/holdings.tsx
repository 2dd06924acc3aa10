import { Suspense } from "react";
import type { Address } from "viem";
import { amountText, holdingsOf, type Asset, type Holding } from "@/lib/prices/holdings";

/** One asset's line: its balance and value, or that it could not be read. */
export function holdingText(holding: Holding): string {
  if (holding.balance === null) return `${holding.symbol} balance unavailable`;
  return amountText(holding.balance, holding, holding.price);
}

async function HoldingsRead({ address, assets }: { address: Address; assets: Promise<Asset[]> }) {
  const holdings = await holdingsOf(address, await assets);
  const chains = new Set(holdings.map((holding) => holding.chain.id));
  return (
    <ul className="holdings">
      {holdings.map((holding) => (
        <li key={`${holding.chain.id}:${holding.token ?? "coin"}`}>
          {holdingText(holding)}
          {chains.size > 1 && <span className="muted small"> on {holding.chain.name}</span>}
        </li>
      ))}
    </ul>
  );
}

/** What a wallet holds, streamed in after the page around it; `assets` is shared by every wallet of a page. */
export function Holdings({ address, assets, label }: { address: Address; assets: Promise<Asset[]>; label: string }) {
  return (
    <div className="small" aria-label={label} role="group">
      <Suspense
        fallback={
          <span className="muted" aria-busy="true">
            Reading balances…
          </span>
        }
      >
        <HoldingsRead address={address} assets={assets} />
      </Suspense>
    </div>
  );
}
