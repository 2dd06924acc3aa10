import { Suspense } from "react";
import { formatUnits, type Address } from "viem";
import { holdingsOf, type Holding } from "@/lib/prices/holdings";
import type { Asset } from "@/lib/wallet/token-metadata";
import { priceCurrency } from "@/lib/prices/feeds";
import { moneyText, type Price } from "@/lib/prices/format";
import { ReadableAmount } from "./readable-amount";

/** An amount of an asset as people read it, its exact decimal a tap away, then its value when there is a price. */
export function AssetAmount({ amount, asset, price }: { amount: bigint; asset: Asset; price: Price | null }) {
  const money = price && moneyText(amount, asset.decimals, price, priceCurrency());
  return <ReadableAmount exact={formatUnits(amount, asset.decimals)} symbol={asset.symbol} after={money ? ` (≈ ${money})` : ""} />;
}

/** One asset's line: its balance and value, or that it could not be read. */
export function HoldingLine({ holding }: { holding: Holding }) {
  if (holding.balance === null) return `${holding.symbol} balance unavailable`;
  return <AssetAmount amount={holding.balance} asset={holding} price={holding.price} />;
}

async function HoldingsRead({ address, assets }: { address: Address; assets: Promise<Asset[]> }) {
  const holdings = await holdingsOf(address, await assets);
  const chains = new Set(holdings.map((holding) => holding.chain.id));
  return (
    <ul className="holdings">
      {holdings.map((holding) => (
        <li key={`${holding.chain.id}:${holding.token ?? "coin"}`}>
          <HoldingLine holding={holding} />
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
