import { Suspense } from "react";

async function AmountValuesRead({ values }: { values: Promise<string[]> }) {
  const lines = await values;
  return lines.length > 0 && <div className="small money">{lines.join(" · ")}</div>;
}

/**
 * A listed request's amounts with their value ("0.1 ETH (≈ $200.00)"), streamed in after the list; nothing for an
 * amount without a fresh price. `values` comes from valuedAmounts (lib/prices/holdings.ts).
 */
export function AmountValues({ values }: { values: Promise<string[]> }) {
  return (
    <Suspense fallback={<span aria-busy="true" />}>
      <AmountValuesRead values={values} />
    </Suspense>
  );
}
