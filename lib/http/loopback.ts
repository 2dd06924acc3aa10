/** Host names that always mean this machine (RFC 8252 §7.3 and §8.3), as URL.hostname writes them. */
const LOOPBACK_HOSTNAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

export function isLoopbackHostname(hostname: string): boolean {
  return LOOPBACK_HOSTNAMES.has(hostname);
}

/**
 * Whether a Host header (host, optional port) names a loopback host. Runs per /mcp request:
 * slices the string, no URL parsing.
 */
export function isLoopbackHostHeader(host: string | null): boolean {
  if (!host) return false;
  const end = host.startsWith("[") ? host.indexOf("]") + 1 : host.indexOf(":");
  return isLoopbackHostname((end > 0 ? host.slice(0, end) : host).toLowerCase());
}
