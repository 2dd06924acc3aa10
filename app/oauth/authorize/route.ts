import { startAuthorization } from "@/lib/oauth/authorize";
import { errorPage } from "@/lib/http/error-page";
import { RateLimitedError } from "@/lib/http/errors";
import { clientIp } from "@/lib/limits/client-ip";
import { spendRateLimit } from "@/lib/limits/rate-limit";

/** Longer than any real authorization request (URLs, state, challenge), far below what a server accepts. */
const MAX_QUERY = 8192;

// A person's browser arrives here: refusals before the client and redirect URI are checked are pages, as in
// startAuthorization (a redirect would need those checks, which the limit is there to spare).
export async function GET(request: Request) {
  const url = new URL(request.url);
  if (url.search.length > MAX_QUERY) {
    return errorPage("Request too long", `The authorization request may be at most ${MAX_QUERY} characters long.`, 414);
  }
  try {
    await spendRateLimit("authorize", { ip: clientIp(request.headers), client: url.searchParams.get("client_id") ?? "" });
  } catch (error) {
    if (!(error instanceof RateLimitedError)) throw error;
    return errorPage("Too many requests", error.message, 429, { headers: { "Retry-After": String(error.retryAfterSeconds) } });
  }
  const outcome = await startAuthorization(url.searchParams);
  if (outcome.kind === "error_page") return errorPage(outcome.title, outcome.message, 400);
  if (outcome.kind === "error_return") {
    return errorPage(outcome.title, outcome.message, 400, { back: { href: outcome.location, text: `Return to ${outcome.host}` } });
  }
  return new Response(null, { status: 302, headers: { Location: outcome.location, "Cache-Control": "no-store" } });
}
