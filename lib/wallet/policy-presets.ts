// The spending limits a person picks per credential on the consent screen, when issuing an API key and when
// editing a grant on the Clients screen. Pure and browser-safe: the picker and the server agree on exactly the
// rules each choice means, and a stored policy reads back into the same form it was written with.
import { formatEther, formatUnits, getAddress, parseEther, parseUnits } from "viem";
import { policySchema, type Policy } from "@/contract";

/**
 * The coin the native caps are typed in: the symbol every configured chain shares, or, when they differ, each
 * chain's in words ("ETH on Local, POL on Polygon"). A cap counts in the coin of the chain a request is on.
 */
export type NativeCoin = { shared: string } | { each: string };

/** The configured chains' coin, as the limits form names it. */
export function nativeCoin(chains: { name: string; symbol: string }[]): NativeCoin {
  const bySymbol = new Map<string, string[]>();
  for (const chain of chains) bySymbol.set(chain.symbol, [...(bySymbol.get(chain.symbol) ?? []), chain.name]);
  const [only] = bySymbol.keys();
  if (bySymbol.size === 1) return { shared: only };
  return { each: [...bySymbol].map(([symbol, names]) => `${symbol} on ${names.join(" and ")}`).join(", ") };
}

/** What follows an amount field's name: "(ETH)", or "(in each chain's coin: ETH on Local, POL on Polygon)". */
export const coinNote = (coin: NativeCoin) => ("shared" in coin ? `(${coin.shared})` : `(in each chain's coin: ${coin.each})`);

export const POLICY_PRESETS = {
  ask: { label: () => "Ask me for everything", policy: {} },
  small: {
    label: (coin: NativeCoin) =>
      "shared" in coin
        ? `Up to 0.05 ${coin.shared} a transaction, 0.2 ${coin.shared} a day`
        : `Up to 0.05 a transaction, 0.2 a day ${coinNote(coin)}`,
    policy: { native: { per_transaction: String(parseEther("0.05")), per_day: String(parseEther("0.2")) } },
  },
} as const satisfies Record<string, { label: (coin: NativeCoin) => string; policy: Policy }>;
export type PresetKey = keyof typeof POLICY_PRESETS;

/** A token the person's wallets may hold (a chain's listed or a followed one): picked by its name, typed in its units. */
export type PickableToken = { chainId: number; address: string; symbol: string; decimals: number };

/** A token cap as the form holds it: the token picked, its amounts in its own units as typed ("" for none). */
export type TokenCapChoice = { token: PickableToken; perTransaction: string; perDay: string };

/** Every rule as the custom form holds it: text fields as typed, the picked tokens' caps, two switches. */
export type CustomLimits = {
  perTransaction: string;
  perDay: string;
  perWeek: string;
  recipients: string;
  chains: string;
  /** one contract a line: `<address> [<selector> …]` */
  contracts: string;
  /** caps of tokens picked by name, in their units */
  tokenCaps: TokenCapChoice[];
  /** any other token's cap, one a line: `<chain id> <token address> <per transaction> <per day>`, in its units, `-` for none */
  tokens: string;
  /** stored caps of tokens whose decimals the page was not told: kept exactly as stored, in smallest units */
  unreadCaps: NonNullable<Policy["tokens"]>;
  typedDataContracts: string;
  typedDataNames: string;
  requestsPerHour: string;
  signMessage: boolean;
  noUnlimitedApprovals: boolean;
};

export const NO_CUSTOM_LIMITS: CustomLimits = {
  perTransaction: "",
  perDay: "",
  perWeek: "",
  recipients: "",
  chains: "",
  contracts: "",
  tokenCaps: [],
  tokens: "",
  unreadCaps: [],
  typedDataContracts: "",
  typedDataNames: "",
  requestsPerHour: "",
  signMessage: true,
  noUnlimitedApprovals: false,
};

/** The entries that say something: no undefined, no empty list (an empty field is no rule, not a rule allowing nothing). */
const stated = <T extends Record<string, unknown>>(entries: T) =>
  Object.fromEntries(
    Object.entries(entries).filter(([, value]) => value !== undefined && !(Array.isArray(value) && value.length === 0)),
  ) as Partial<T>;

const words = (text: string) => text.split(/[\s,]+/).filter(Boolean);
const lines = (text: string) =>
  text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);

function ether(label: string, text: string) {
  const value = text.trim();
  if (!value) return undefined;
  if (!/^\d{1,30}(\.\d{1,18})?$/.test(value)) throw new Error(`${label}: enter an amount, like 0.05`);
  return String(parseEther(value));
}

/** A line of the other tokens' caps in its parts; the amounts as typed, undefined for none (`-`). */
function tokenCapLine(line: string) {
  const [chain, token, perTransaction, perDay, ...rest] = line.split(/\s+/);
  if (!token || rest.length) throw new Error(`Token caps: write “chain token per-transaction per-day” on each line (got “${line}”)`);
  const amount = (value: string | undefined) => (value === "-" ? undefined : value);
  return { chainId: Number(chain), token, perTransaction: amount(perTransaction), perDay: amount(perDay) };
}

/** The tokens the other tokens' caps name by contract, to look up (lines not yet complete are skipped). */
export function contractsIn(text: string): { chainId: number; address: string }[] {
  return lines(text).flatMap((line) => {
    const [chain, address] = line.split(/\s+/);
    return /^\d+$/.test(chain) && /^0x[0-9a-fA-F]{40}$/.test(address ?? "") ? [{ chainId: Number(chain), address }] : [];
  });
}

const sameToken = (token: PickableToken, chainId: number, address: string) =>
  token.chainId === chainId && getAddress(token.address) === getAddress(address);

/** An amount typed in a token's units, in its smallest units: exact (parseUnits), never rounded; more decimals are refused. */
function tokenUnits(text: string | undefined, token: PickableToken): string | undefined {
  const value = text?.trim();
  if (!value) return undefined;
  if (!/^\d{1,30}(\.\d+)?$/.test(value) || (value.split(".")[1] ?? "").length > token.decimals)
    throw new Error(`Token cap for ${token.symbol}: enter an amount of ${token.symbol}, like 5 or 0.25`);
  return String(parseUnits(value, token.decimals));
}

/** A picked token's cap in its smallest units, from amounts typed in its own. */
function pickedCap({ token, perTransaction, perDay }: TokenCapChoice) {
  return stated({
    chain_id: token.chainId,
    token: token.address,
    per_transaction: tokenUnits(perTransaction, token),
    per_day: tokenUnits(perDay, token),
  });
}

/** Another token's cap, typed in its units: `read` holds what its contract said it is (symbol, decimals). */
function contractCap(line: string, read: PickableToken[]) {
  const cap = tokenCapLine(line);
  const token = /^0x[0-9a-fA-F]{40}$/.test(cap.token) ? read.find((known) => sameToken(known, cap.chainId, cap.token)) : undefined;
  if (!token) throw new Error(`Token caps: ${cap.token} on chain ${cap.chainId} is not an ERC-20 token this page could read`);
  return pickedCap({ token, perTransaction: cap.perTransaction ?? "", perDay: cap.perDay ?? "" });
}

/**
 * A custom choice as rules. Empty fields limit nothing; the result is checked by the same schema the server uses.
 * `read`: the tokens named by contract in `tokens`, as their contracts describe themselves (a cap needs their decimals).
 */
export function customPolicy(limits: CustomLimits, read: PickableToken[] = []): Policy {
  const native = stated({
    per_transaction: ether("Per transaction", limits.perTransaction),
    per_day: ether("Per day", limits.perDay),
    per_week: ether("Per week", limits.perWeek),
  });
  const typedData = stated({ verifying_contracts: words(limits.typedDataContracts), names: lines(limits.typedDataNames) });
  const rules = stated({
    native: Object.keys(native).length ? native : undefined,
    tokens: [...limits.tokenCaps.map(pickedCap), ...lines(limits.tokens).map((line) => contractCap(line, read)), ...limits.unreadCaps],
    recipients: words(limits.recipients),
    chains: words(limits.chains).map(Number),
    contracts: lines(limits.contracts).map((line) => {
      const [address, ...selectors] = words(line);
      return stated({ address, selectors });
    }),
    no_unlimited_approvals: limits.noUnlimitedApprovals || undefined,
    typed_data: Object.keys(typedData).length ? typedData : undefined,
    sign_message: limits.signMessage ? undefined : false,
    requests_per_hour: limits.requestsPerHour.trim() ? Number(limits.requestsPerHour.trim()) : undefined,
  });
  const parsed = policySchema.safeParse(rules);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${issue.path.join(".") || "Limits"}: ${issue.message}`);
  }
  return parsed.data;
}

/**
 * A stored policy in the custom form's terms: customPolicy(customLimitsOf(p)) gives p back. The caps of `known` tokens
 * read back in their units, picked by name; any other token's are kept as stored (its units are not known here).
 */
export function customLimitsOf(policy: Policy, known: PickableToken[] = []): CustomLimits {
  const pickable = (rule: NonNullable<Policy["tokens"]>[number]) =>
    known.find((token) => token.chainId === rule.chain_id && getAddress(token.address) === getAddress(rule.token));
  const units = (amount: string | undefined, decimals: number) => (amount === undefined ? "" : formatUnits(BigInt(amount), decimals));
  const eth = (wei: string | undefined) => (wei === undefined ? "" : formatEther(BigInt(wei)));
  return {
    perTransaction: eth(policy.native?.per_transaction),
    perDay: eth(policy.native?.per_day),
    perWeek: eth(policy.native?.per_week),
    recipients: (policy.recipients ?? []).join("\n"),
    chains: (policy.chains ?? []).join(", "),
    contracts: (policy.contracts ?? []).map((entry) => [entry.address, ...(entry.selectors ?? [])].join(" ")).join("\n"),
    tokenCaps: (policy.tokens ?? []).flatMap((rule) => {
      const token = pickable(rule);
      return token
        ? [{ token, perTransaction: units(rule.per_transaction, token.decimals), perDay: units(rule.per_day, token.decimals) }]
        : [];
    }),
    tokens: "",
    unreadCaps: (policy.tokens ?? []).filter((rule) => !pickable(rule)),
    typedDataContracts: (policy.typed_data?.verifying_contracts ?? []).join("\n"),
    typedDataNames: (policy.typed_data?.names ?? []).join("\n"),
    requestsPerHour: policy.requests_per_hour === undefined ? "" : String(policy.requests_per_hour),
    signMessage: policy.sign_message !== false,
    noUnlimitedApprovals: policy.no_unlimited_approvals === true,
  };
}

/** A preset's rules, refusing unlimited approvals or not: that box sits beside every choice. */
export function presetPolicy(key: PresetKey, noUnlimitedApprovals: boolean): Policy {
  return noUnlimitedApprovals ? { ...POLICY_PRESETS[key].policy, no_unlimited_approvals: true } : POLICY_PRESETS[key].policy;
}

/** The preset a stored policy is, refusing unlimited approvals or not, or "custom". */
export function presetOf(policy: Policy): PresetKey | "custom" {
  const same = (a: unknown, b: unknown) => JSON.stringify(policySchema.parse(a)) === JSON.stringify(policySchema.parse(b));
  const refuses = policy.no_unlimited_approvals === true;
  const match = (Object.keys(POLICY_PRESETS) as PresetKey[]).find((key) => same(presetPolicy(key, refuses), policy));
  return match ?? "custom";
}
