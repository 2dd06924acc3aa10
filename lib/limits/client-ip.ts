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

/** The first `bits` bits of an IPv6 address, as a network: 2001:db8:1:2::/64. */
function network(ip: ipaddr.IPv6, bits: number): string {
  const parts = ip.parts.map((part, index) => {
    const kept = Math.min(16, Math.max(0, bits - 16 * index));
    return part & (0xffff << (16 - kept)) & 0xffff;
  });
  return `${new ipaddr.IPv6(parts).toString()}/${bits}`;
}

/**
 * The keys of recently seen addresses, per IPv6 prefix length (a process has one; the tests try several): parsing
 * an address costs more than the rest of a request's limit check, and the same few clients come back.
 */
const keysByPrefix = new Map<number, LRUCache<string, string>>();

/**
 * What per-address limits count `address` as: an IPv4 address (an IPv4-mapped IPv6 one too) as itself, an IPv6 one
 * by its network of `ipv6Prefix` bits, since a host commonly holds a whole /64 and could take a new address per
 * request; text that is no address as it is.
 */
function limitKey(address: string, ipv6Prefix: number): string {
  let keys = keysByPrefix.get(ipv6Prefix);
  if (!keys) keysByPrefix.set(ipv6Prefix, (keys = new LRUCache({ max: 10_000 })));
  let key = keys.get(address);
  if (key === undefined) {
    const ip = parsed(address);
    key = ip instanceof ipaddr.IPv6 ? network(ip, ipv6Prefix) : (ip?.toString() ?? address);
    keys.set(address, key);
  }
  return key;
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
 * The client's address, as limits count it (`limitKey`), from the connection's (null when out of sight) and
 * X-Forwarded-For: from the connection the walk goes left through X-Forwarded-For only while the hop that wrote the
 * next entry is a proxy `trusted` names, by count or by address (as proxy-addr does). Without the connection,
 * X-Forwarded-For's last entry stands in for it.
 */
export function clientAddress(
  connection: string | null,
  forwardedFor: string | null,
  trusted: number | string[],
  ipv6Prefix: number,
): string {
  const forwarded = (forwardedFor ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  const hops = connection === null ? forwarded : [...forwarded, connection];
  let index = hops.length - 1;
  for (let passed = connection === null ? 1 : 0; index > 0 && isTrustedProxy(hops[index], passed, trusted); passed++) index--;
  const address = hops[index];
  return address ? limitKey(address, ipv6Prefix) : "unknown";
}

/**
 * The address a request came from, for per-address limits (an IPv6 one as its network of RATE_LIMIT_IPV6_PREFIX
 * bits). The production server (server.ts) hands every request the connection's own address in a header of its own,
 * replacing whatever a client sent under that name, so with no proxy trusted (TRUSTED_PROXIES) a forged
 * X-Forwarded-For changes nothing. Under `next start` the connection is
 * out of sight: X-Forwarded-For's last entry (Next sets it to the peer only when the request has none) stands in for
 * it, and a direct client can choose it (docs/operations.md).
 */
export function clientIp(headers: Headers): string {
  const connection = stampsConnectionAddress() ? headers.get(CONNECTION_ADDRESS_HEADER) : null;
  const { trustedProxies, rateLimitIpv6Prefix } = config();
  return clientAddress(connection, headers.get("x-forwarded-for"), trustedProxies, rateLimitIpv6Prefix);
}
