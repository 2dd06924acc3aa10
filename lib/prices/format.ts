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

/** How many significant digits an amount may carry before it is shortened for reading. */
const READABLE_DIGITS = 6;

/**
 * A decimal as people read it: one with at most 6 significant digits as it is ("1234.5", "0.000021"), a longer one to
 * 4 significant digits, never fewer than its whole part and, from 1 up, 2 decimals ("9.899968500000000001" → "9.9",
 * "1234.56789" → "1234.57", "0.000123456789" → "0.0001235"), rounded half up on the digits, without floating point.
 * Only for reading: the exact decimal stays one tap away, and nothing signed is ever rounded.
 */
export function readableDecimal(exact: string): string {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(exact);
  if (!match) return exact;
  const [, sign, whole, fraction = ""] = match;
  const significant = `${whole}${fraction}`.replace(/^0+/, "").replace(/0+$/, "");
  if (significant.length <= READABLE_DIGITS) return exact;
  const zeros = /^0*/.exec(fraction)![0].length;
  const decimals = whole === "0" ? zeros + 4 : Math.max(2, 4 - whole.length);
  if (fraction.length <= decimals) return exact;
  const kept = BigInt(`${whole}${fraction.slice(0, decimals)}`) + (Number(fraction[decimals]) >= 5 ? 1n : 0n);
  const digits = kept.toString().padStart(decimals + 1, "0");
  const shortWhole = decimals ? digits.slice(0, -decimals) : digits;
  const shortFraction = decimals ? digits.slice(-decimals).replace(/0+$/, "") : "";
  return `${sign}${shortWhole}${shortFraction ? `.${shortFraction}` : ""}`;
}
