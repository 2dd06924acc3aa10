import { Suspense } from "react";
import type { Address } from "viem";
import { priceCurrency, priceOf } from "@/lib/prices/feeds";
import { moneyText } from "@/lib/prices/format";

type Props = { chainId: number; token: Address | null; amount: bigint; decimals: number };

async function MoneyRead({ chainId, token, amount, decimals }: Props) {
  const price = await priceOf(chainId, token);
  return price && <span className="money"> (≈ {moneyText(amount, decimals, price, priceCurrency())})</span>;
}

/**
 * " (≈ $200.00)" after an amount of a chain's coin (token null) or of a token; nothing without a fresh price. It streams
 * in after the page: a slow feed never holds what the person decides on.
 */
export function Money(props: Props) {
  return (
    <Suspense fallback={<span aria-busy="true" />}>
      <MoneyRead {...props} />
    </Suspense>
  );
}
