import { config } from "@/lib/config";
import { isLoopbackHostHeader, isLoopbackHostname } from "@/lib/http/loopback";

type Guard = { allowedOrigins: ReadonlySet<string>; loopbackOnly: boolean };
let guard: Guard | undefined;

/** Built once per process: /mcp checks every request against it. */
function requestGuard(): Guard {
  if (!guard) {
    const { mcpAllowedOrigins, baseUrl } = config();
    guard = { allowedOrigins: new Set(mcpAllowedOrigins), loopbackOnly: isLoopbackHostname(new URL(baseUrl).hostname) };
  }
  return guard;
}

/**
 * Why /mcp refuses a request before anything else, or null (the MCP transport's DNS-rebinding rule): a
 * browser page's Origin must be an allowed one, and a service configured on a loopback host answers
 * only requests addressed to a loopback host, so a hostile name rebound to 127.0.0.1 cannot reach it.
 */
export function refusedRequest(headers: Headers): string | null {
  const { allowedOrigins, loopbackOnly } = requestGuard();
  const origin = headers.get("origin");
  if (origin !== null && !allowedOrigins.has(origin)) return `Forbidden: requests from the origin ${origin} are not allowed`;
  if (loopbackOnly && !isLoopbackHostHeader(headers.get("host"))) return "Forbidden: this server answers only on a loopback host";
  return null;
}
