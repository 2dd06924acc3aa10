import ipaddr from "ipaddr.js";
import { LRUCache } from "lru-cache";
import { config } from "@/lib/config";
import { CONNECTION_ADDRESS_HEADER, stampsConnectionAddress } from "@/lib/http/connection-address";

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];
const parsedRanges = new WeakMap<string[], Range[]>();

/** An address in one spelling (an IPv4-mapped IPv6 address as IPv4), or null when the text is no address. */
function parsed(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  return ipaddr.isValid(address) ? ipaddr.process(address) : null;
}

/**
 * Addresses in their one spelling, as recently seen: parsing one costs more than the rest of a request's limit check,
 * and the same few clients come back.
 */
const spellings = new LRUCache<string, string>({ max: 10_000 });

/** `address` in its one spelling, or as it is when it is no address. */
function spelled(address: string): string {
  let spelling = spellings.get(address);
  if (spelling === undefined) spellings.set(address, (spelling = parsed(address)?.toString() ?? address));
  return spelling;
}

/** Whether the hop that wrote X-Forwarded-For's next entry may be believed: the `passed`-th proxy, at `address`. */
function isTrustedProxy(address: string, passed: number, trusted: number | string[]): boolean {
  if (typeof trusted === "number") return passed < trusted;
  let ranges = parsedRanges.get(trusted);
  if (!ranges) parsedRanges.set(trusted, (ranges = trusted.map((cidr) => ipaddr.parseCIDR(cidr))));
  const ip = parsed(address);
  return !!ip && ranges.some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits));
}

/**
 * The client's address from the connection's (null when out of sight) and X-Forwarded-For: from the connection the
 * walk goes left through X-Forwarded-For only while the hop that wrote the next entry is a proxy `trusted` names, by
 * count or by address (as proxy-addr does). Without the connection, X-Forwarded-For's last entry stands in for it.
 */
export function clientAddress(connection: string | null, forwardedFor: string | null, trusted: number | string[]): string {
  const forwarded = (forwardedFor ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  const hops = connection === null ? forwarded : [...forwarded, connection];
  let index = hops.length - 1;
  for (let passed = connection === null ? 1 : 0; index > 0 && isTrustedProxy(hops[index], passed, trusted); passed++) index--;
  const address = hops[index];
  return address ? spelled(address) : "unknown";
}

/**
 * The address a request came from, for per-address limits. The production server (server.ts) hands every request
 * the connection's own address in a header of its own, replacing whatever a client sent under that name, so with no
 * proxy trusted (TRUSTED_PROXIES) a forged X-Forwarded-For changes nothing. Under `next start` the connection is
 * out of sight: X-Forwarded-For's last entry (Next sets it to the peer only when the request has none) stands in for
 * it, and a direct client can choose it (docs/operations.md).
 */
export function clientIp(headers: Headers): string {
  const connection = stampsConnectionAddress() ? headers.get(CONNECTION_ADDRESS_HEADER) : null;
  return clientAddress(connection, headers.get("x-forwarded-for"), config().trustedProxies);
}
