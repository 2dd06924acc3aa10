// What the agent's own side checks before it hands an x402 requirement to pay_x402 (decision 0036): that it is for
// the resource fetched or the tool called, and that it asks no more than the caller's most per payment. Pure: the
// token's symbol and decimals are given by the caller (x402.ts reads them through get_balance).

/** One way to pay a requirement offers, as the SDK reads it (a V1 entry in V2's terms). */
export type PaymentOffer = {
  scheme: string;
  /** as the resource named it: CAIP-2 (`eip155:8453`) or a V1 name (`base-sepolia`) */
  network: string;
  /** the EVM chain a CAIP-2 network names; null for a V1 name (networkChainId reads those) or another namespace */
  chainId: number | null;
  /** in the token's smallest unit */
  amount: string;
  asset: string;
  payTo: string;
  /** the resource this entry is for (V1 names it in each entry; V2 once for all) */
  resource: string;
};

/** A requirement as the SDK read it: the resource it names, and its ways to pay. */
export type ReadRequirement = {
  version: 1 | 2;
  resource: { url: string; description: string | null };
  accepts: PaymentOffer[];
};

/** An offer the checks passed: its token as the wallet read it on chain, and the amount in whole tokens. */
export type CheckedOffer = PaymentOffer & { chainId: number; symbol: string; decimals: number; formatted: string; most: string };

/** What `beforePay` is shown: the requirement with only the offers the checks passed, one of which pay_x402 pays. */
export type PaymentRequirement = Omit<ReadRequirement, "accepts"> & { accepts: CheckedOffer[] };

/** What the resource gave: a V2 `PAYMENT-REQUIRED` header's value, or a V1 402 body. */
export type GivenRequirement = string | Record<string, unknown>;

/** The most per payment when the caller names none, in whole tokens of any token (decision 0036). */
export const DEFAULT_MAX_PER_PAYMENT = "0.10";

function decodeBase64Json(text: string): unknown {
  const normal = text.trim().replace(/-/g, "+").replace(/_/g, "/");
  const bytes = Uint8Array.from(atob(normal), (character) => character.charCodeAt(0));
  return JSON.parse(new TextDecoder().decode(bytes));
}

export function encodeBase64Json(value: unknown): string {
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  return btoa(Array.from(bytes, (byte) => String.fromCharCode(byte)).join(""));
}

const text = (value: unknown) => (typeof value === "string" ? value : "");

function chainIdOf(network: string): number | null {
  const caip = /^eip155:([1-9][0-9]{0,15})$/.exec(network);
  return caip ? Number(caip[1]) : null;
}

/**
 * The chain a network names: CAIP-2 `eip155:<id>`, or a V1 name (`base-sepolia`) as `@x402/evm`'s V1 table maps it,
 * loaded only when a V1 name comes (it takes about a third of a second, which no other command of the CLI should
 * pay); null for any other.
 */
export async function networkChainId(network: string): Promise<number | null> {
  const caip = chainIdOf(network);
  if (caip !== null || network.includes(":")) return caip;
  const { EVM_NETWORK_CHAIN_ID_MAP } = await import("@x402/evm/v1");
  return Object.hasOwn(EVM_NETWORK_CHAIN_ID_MAP, network)
    ? EVM_NETWORK_CHAIN_ID_MAP[network as keyof typeof EVM_NETWORK_CHAIN_ID_MAP]
    : null;
}

/** The requirement's JSON: a V1 body as it is, a V2 header decoded; null when it is neither. */
export function jsonOf(given: GivenRequirement): Record<string, unknown> | null {
  if (typeof given !== "string") return given;
  try {
    const json = given.trim().startsWith("{") ? JSON.parse(given) : decodeBase64Json(given);
    return json && typeof json === "object" && !Array.isArray(json) ? (json as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Reads what a requirement asks, or null when the SDK cannot (then nothing can be checked, and it is not paid). */
export function readRequirement(given: GivenRequirement): ReadRequirement | null {
  const json = jsonOf(given);
  if (!json || !Array.isArray(json.accepts) || !json.accepts.length) return null;
  const version = json.x402Version;
  if (version !== 1 && version !== 2) return null;
  const resource = (json.resource ?? {}) as Record<string, unknown>;
  const accepts = (json.accepts as Record<string, unknown>[]).map((entry) => ({
    scheme: text(entry?.scheme),
    network: text(entry?.network),
    chainId: chainIdOf(text(entry?.network)),
    amount: text(version === 2 ? entry?.amount : entry?.maxAmountRequired),
    asset: text(entry?.asset),
    payTo: text(entry?.payTo),
    resource: version === 2 ? text(resource.url) : text(entry?.resource),
  }));
  const first = version === 2 ? resource : ((json.accepts as Record<string, unknown>[])[0] ?? {});
  return {
    version,
    resource: { url: version === 2 ? text(resource.url) : accepts[0].resource, description: text(first.description) || null },
    accepts,
  };
}

/**
 * The same requirement offering only the entries `keep` says (by index), in the form it was given: pay_x402 then
 * chooses among those alone. All kept: the requirement exactly as given.
 */
export function narrowed(given: GivenRequirement, keep: (index: number) => boolean): GivenRequirement {
  const json = jsonOf(given)!;
  const accepts = json.accepts as unknown[];
  if (accepts.every((_, index) => keep(index))) return given;
  const less = { ...json, accepts: accepts.filter((_, index) => keep(index)) };
  return typeof given === "string" && !given.trim().startsWith("{") ? encodeBase64Json(less) : less;
}

function parsed(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

/**
 * Whether a requirement's resource URL names the URL fetched: the same origin (scheme, host, port) and the same path.
 * The query and the fragment are not compared: a merchant prices a route and often names it without the query (or
 * with its own), and the payment is bound to its payee and amount, not to the query.
 */
export function sameResource(fetched: string, named: string): boolean {
  const [a, b] = [parsed(fetched), parsed(named)];
  return a !== null && b !== null && a.origin !== "null" && a.origin === b.origin && a.pathname === b.pathname;
}

/**
 * Whether a requirement's resource URL names the MCP tool called: an `mcp:` URL whose path ends in the tool's name
 * (`mcp://tool/<name>`, as x402's MCP server wrapper names it, or `mcp://<server>/tools/<name>`). With `expected`
 * (the caller knows the server's own name for it), exactly that URL, query and fragment aside.
 */
export function sameTool(tool: string, named: string, expected?: string): boolean {
  const url = parsed(named);
  if (url === null || url.protocol !== "mcp:") return false;
  if (expected !== undefined) {
    const want = parsed(expected);
    return want !== null && want.protocol === url.protocol && want.host === url.host && want.pathname === url.pathname;
  }
  const last = url.pathname.split("/").pop() ?? "";
  try {
    return decodeURIComponent(last) === tool;
  } catch {
    return false;
  }
}

/** A most in whole tokens ("0.50", "2") in the token's smallest unit, cut down to what its decimals can hold. */
export function maxInBaseUnits(most: string, decimals: number): bigint {
  const match = /^\s*(\d*)(?:\.(\d*))?\s*$/.exec(most);
  if (!match || (!match[1] && !match[2])) throw new TypeError(`${JSON.stringify(most)} is not an amount in whole tokens, such as "0.50"`);
  const [, whole, fraction = ""] = match;
  return BigInt(whole || "0") * 10n ** BigInt(decimals) + BigInt(fraction.slice(0, decimals).padEnd(decimals, "0") || "0");
}

/**
 * The most per payment that applies to a token: the entry of `maxPerPayment` named by its address (any case) or,
 * else, by its symbol as the token reports it; without `maxPerPayment`, the default. null: the caller named mosts,
 * none for this token, so it is not paid.
 */
export function mostFor(maxPerPayment: Record<string, string> | undefined, token: { address: string; symbol: string }): string | null {
  if (maxPerPayment === undefined) return DEFAULT_MAX_PER_PAYMENT;
  const byAddress = Object.entries(maxPerPayment).find(([key]) => key.toLowerCase() === token.address.toLowerCase());
  return byAddress?.[1] ?? (Object.hasOwn(maxPerPayment, token.symbol) ? maxPerPayment[token.symbol] : null);
}
