// An amount's value in the person's currency, as text. Pure and browser-safe: integers in, a string out, no
// floating point on the way, so a value is never rounded before it is shown.
import { formatUnits } from "viem";

/** A feed's answer: the money one whole unit of the asset is worth, with the feed's own decimals. */
export type Price = { answer: bigint; decimals: number };

/** What `amount` (in the asset's smallest unit, `decimals` of them to a whole unit) is worth at `price`, exactly: "200.5". */
export function moneyAmount(amount: bigint, decimals: number, price: Price): string {
  return formatUnits(amount * price.answer, decimals + price.decimals);
}

/** What `amount` (in the asset's smallest unit, `decimals` of them to a whole unit) is worth at `price`: "$200.00". */
export function moneyText(amount: bigint, decimals: number, price: Price, currency: string): string {
  const format = new Intl.NumberFormat("en", { style: "currency", currency });
  const value = moneyAmount(amount, decimals, price);
  const smallest = 10 ** -(format.resolvedOptions().maximumFractionDigits ?? 2);
  // Something worth less than a cent is worth something: say so, rather than "$0.00".
  if (amount > 0n && Number(value) < smallest) return `< ${format.format(smallest)}`;
  return format.format(value as Intl.StringNumericLiteral);
}

/** An amount's value for an agent (get_balance): its currency, the exact decimal, and the text the pages show. */
export function moneyValue(amount: bigint, decimals: number, price: Price, currency: string) {
  return { currency, amount: moneyAmount(amount, decimals, price), text: moneyText(amount, decimals, price, currency) };
}

/** "0.1 ETH (≈ $200.00)": an amount in its units, then its value when there is a price. */
export function amountWithMoney(units: string, money: string | null): string {
  return money === null ? units : `${units} (≈ ${money})`;
}
