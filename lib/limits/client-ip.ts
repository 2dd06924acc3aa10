import { config } from "@/lib/config";

/**
 * The address a request came from, for per-address limits. `next start` puts the peer's address in
 * X-Forwarded-For only when the request has none, and each proxy in front appends the address it saw; so with
 * TRUSTED_PROXIES = n the client is the n-th entry from the end, and with none the last entry (which a client
 * talking to the app directly can choose: docs/operations.md).
 */
export function clientIp(headers: Headers): string {
  const entries = (headers.get("x-forwarded-for") ?? "").split(",").map((entry) => entry.trim());
  const index = entries.length - Math.max(1, config().trustedProxies);
  return (index >= 0 && entries[index]) || "unknown";
}
