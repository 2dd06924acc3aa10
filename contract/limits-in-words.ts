// A credential's spending limits in the person's words, the same on the Clients screen and in the CLI: native caps in
// the coin of the chains they hold on, token caps in whole tokens with the token's symbol (base units of its address
// when the token does not say), every rule as the person set it. Pure: get_policy's view is all it reads, and a view
// from a server that predates the tokens' symbol and decimals still reads, in base units.
import type { PolicyView } from "./index";

type Limits = Pick<PolicyView, "policy" | "remaining">;
type Chains = Limits["remaining"]["native_by_chain"];
type Allowance = { remaining: string };

/** An amount in the smallest unit as whole units, exactly: "10000000000000000" → "0.01" (no floating point). */
export function formatUnits(amount: string | bigint, decimals = 18): string {
  const value = BigInt(amount);
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const base = 10n ** BigInt(decimals);
  const fraction = (abs % base).toString().padStart(decimals, "0").replace(/0+$/, "");
  return `${negative ? "-" : ""}${abs / base}${fraction ? `.${fraction}` : ""}`;
}

/**
 * A decimal amount (as formatUnits writes it) with the digits a person reads: at most 4 decimals, or below 1 its
 * first 4 significant ones (0.0000315, not 0.000031500000147). Cut towards zero (a balance is never shown above
 * itself), or with `up` away from it (a most, such as a maximum fee, never shown below itself).
 */
export function readableUnits(decimal: string, up = false): string {
  const negative = decimal.startsWith("-");
  const [whole, fraction = ""] = (negative ? decimal.slice(1) : decimal).split(".");
  const keep = (whole === "0" ? fraction.length - fraction.replace(/^0+/, "").length : 0) + 4;
  if (fraction.length <= keep) return decimal;
  const digits = BigInt(whole + fraction.slice(0, keep)) + (up && /[1-9]/.test(fraction.slice(keep)) ? 1n : 0n);
  const text = digits.toString().padStart(keep + 1, "0");
  return `${negative ? "-" : ""}${`${text.slice(0, -keep)}.${text.slice(-keep)}`.replace(/\.?0+$/, "")}`;
}

const shortAddress = (address: string) => `${address.slice(0, 6)}…${address.slice(-4)}`;

/** How a decimal amount is shown: as it is, or (`readable`) in a few digits, a most never below itself. */
type Shown = (decimal: string, up: boolean) => string;
const exactly: Shown = (decimal) => decimal;

/** wei in the coin of the chains a native cap holds on: one symbol, or each with its chains when they differ. */
function inCoin(wei: string, chains: Chains, shown: Shown, up: boolean): string {
  const amount = shown(formatUnits(wei), up);
  const bySymbol = new Map<string, string[]>();
  for (const chain of chains) bySymbol.set(chain.symbol, [...(bySymbol.get(chain.symbol) ?? []), chain.chain_name]);
  const [only] = bySymbol.keys();
  if (bySymbol.size <= 1) return only ? `${amount} ${only}` : `${amount} of the chain's coin`;
  return [...bySymbol].map(([symbol, names]) => `${amount} ${symbol} on ${names.join(", ")}`).join(" or ");
}

/** A token amount (smallest unit) in whole tokens with its symbol, or in base units of the token when it did not say. */
export function inToken(
  amount: string,
  token: { token: string; symbol?: string | null; decimals?: number | null },
  shown: Shown = exactly,
  up = false,
): string {
  return token.symbol != null && token.decimals != null
    ? `${shown(formatUnits(amount, token.decimals), up)} ${token.symbol}`
    : `${amount} base units of token ${shortAddress(token.token)}`;
}

const count = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/**
 * Each rule of the credential's policy in a few words, in the order the person sets them; empty when nothing is
 * limited. `left` adds what is left of each rolling cap now; `recipients` names the allowed recipients (a count by
 * default); `readable` writes each amount in a few digits (readableUnits: a cap never below itself, what is left
 * never above), as a terminal shows it.
 */
export function limitsInWords(
  { policy, remaining }: Limits,
  options: { left?: boolean; recipients?: (addresses: string[]) => string; readable?: boolean } = {},
): string[] {
  const chains = remaining.native_by_chain;
  const shown: Shown = options.readable ? readableUnits : exactly;
  const cap = (wei: string, on: Chains) => inCoin(wei, on, shown, true);
  const tokenCap = (amount: string, token: Limits["remaining"]["tokens"][number]) => inToken(amount, token, shown, true);
  const tokenLeft = (amount: string, token: Limits["remaining"]["tokens"][number]) => inToken(amount, token, shown, false);
  /** What is left of a native cap on the chain with the least left, naming that chain when there are several. */
  const nativeLeft = (allowance: Allowance | null, window: "per_day" | "per_week") => {
    if (!options.left || !allowance) return "";
    const chain = chains.find((entry) => entry[window]?.remaining === allowance.remaining);
    const on = chain && chains.length > 1 ? ` on ${chain.chain_name}` : "";
    return ` (${inCoin(allowance.remaining, chain ? [chain] : chains, shown, false)} left${on})`;
  };
  const tokenCaps = remaining.tokens.map((token) =>
    [
      token.per_transaction && `up to ${tokenCap(token.per_transaction, token)} a transaction`,
      token.per_day &&
        `${tokenCap(token.per_day.limit, token)} a day${options.left ? ` (${tokenLeft(token.per_day.remaining, token)} left)` : ""}`,
    ]
      .filter(Boolean)
      .join(", "),
  );
  const hour = remaining.requests_this_hour;
  return [
    policy.native?.per_transaction && `up to ${cap(policy.native.per_transaction, chains)} a transaction`,
    policy.native?.per_day && `${cap(policy.native.per_day, chains)} a day${nativeLeft(remaining.native_per_day, "per_day")}`,
    policy.native?.per_week && `${cap(policy.native.per_week, chains)} a week${nativeLeft(remaining.native_per_week, "per_week")}`,
    ...tokenCaps,
    policy.recipients &&
      `only to ${options.recipients ? options.recipients(policy.recipients) : count(policy.recipients.length, "recipient")}`,
    policy.chains && `chains ${policy.chains.join(", ")}`,
    policy.contracts && count(policy.contracts.length, "allowed contract"),
    policy.typed_data && "typed data limited",
    policy.sign_message === false && "no message signing",
    policy.requests_per_hour !== undefined &&
      `${policy.requests_per_hour} requests an hour${options.left && hour ? ` (${hour.remaining} left)` : ""}`,
    policy.no_unlimited_approvals && "refuses unlimited approvals",
  ].filter((part): part is string => Boolean(part));
}
