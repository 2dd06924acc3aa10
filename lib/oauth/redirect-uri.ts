import { isLoopbackHostname } from "@/lib/http/loopback";

const MAX_LENGTH = 2000;

/** http on a loopback host written literally (no 127.1, no 0x7f000001), with an optional port. */
const LOOPBACK_REDIRECT = /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?(?=[/?]|$)/i;

/** A loopback IP literal's redirect URI and its port; the port is free at authorize (RFC 8252 §7.3). */
const LOOPBACK_IP_REDIRECT = /^http:\/\/(127\.0\.0\.1|\[::1\])(:\d{1,5})?(?=[/?]|$)/;

/**
 * The checks every URL a client chooses (a redirect URI, a client_id URL) passes first, on its text as
 * written: a length, no whitespace, control characters or backslashes, no fragment, absolute, and no user
 * name or password (not even an empty one that URL parsing would drop).
 */
export function clientChosenUrl(value: string, maxLength: number): { url: URL } | { problem: string } {
  if (value.length > maxLength) return { problem: `is longer than ${maxLength} characters` };
  if (/[\s\u0000-\u001f\u007f\\]/.test(value)) return { problem: "contains whitespace, control characters or backslashes" };
  if (value.includes("#")) return { problem: "must not contain a fragment" };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { problem: "is not an absolute URL" };
  }
  if (url.username || url.password || /^[a-z]+:\/\/[^/?]*@/i.test(value)) {
    return { problem: "must not contain user information (a user name or password)" };
  }
  return { url };
}

/**
 * Why a redirect URI cannot be registered, or null when it can: HTTPS, or http on a loopback host
 * (localhost, 127.0.0.1, [::1]; any port) for native and local clients. Anything that could send a
 * code somewhere other than what a person reads is refused.
 */
export function redirectUriProblem(value: string): string | null {
  const checked = clientChosenUrl(value, MAX_LENGTH);
  if ("problem" in checked) return checked.problem;
  const { url } = checked;
  if (url.protocol === "https:") return url.hostname ? null : "has no host";
  if (url.protocol === "http:")
    return isLoopbackHostname(url.hostname) && LOOPBACK_REDIRECT.test(value)
      ? null
      : "must use https, or http only on a loopback host (localhost, 127.0.0.1, [::1])";
  return "must use https, or http on a loopback host";
}

function withoutLoopbackIpPort(uri: string): string | null {
  const match = LOOPBACK_IP_REDIRECT.exec(uri);
  return match ? `http://${match[1]}${uri.slice(match[0].length)}` : null;
}

/**
 * Whether an authorization request's redirect URI is one the client registered: exactly, or for a
 * loopback IP literal (127.0.0.1, [::1]) exactly but for the port, which a native client picks when it
 * starts listening (RFC 8252 §7.3). `http://localhost` stays exact, as docs/product.md fixes it.
 */
export function redirectUriRegistered(presented: string, registered: readonly string[]): boolean {
  if (registered.includes(presented)) return true;
  const portless = withoutLoopbackIpPort(presented);
  if (portless === null || redirectUriProblem(presented) !== null) return false;
  return registered.some((uri) => withoutLoopbackIpPort(uri) === portless);
}
