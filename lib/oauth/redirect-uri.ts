const MAX_LENGTH = 2000;

/**
 * Why a redirect URI cannot be registered, or null when it can: HTTPS, or
 * http://localhost (any port) for local development. Anything that could send
 * a code somewhere other than what a person reads is refused.
 */
export function redirectUriProblem(value: string): string | null {
  if (value.length > MAX_LENGTH) return `is longer than ${MAX_LENGTH} characters`;
  if (/[\s\u0000-\u001f\u007f\\]/.test(value)) return "contains whitespace, control characters or backslashes";
  if (value.includes("#")) return "must not contain a fragment";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "is not an absolute URL";
  }
  if (url.username || url.password || /^[a-z]+:\/\/[^/?]*@/i.test(value)) return "must not contain user information";
  if (url.protocol === "https:") return url.hostname ? null : "has no host";
  if (url.protocol === "http:") return url.hostname === "localhost" ? null : "must use https, or http only on localhost";
  return "must use https, or http://localhost";
}
