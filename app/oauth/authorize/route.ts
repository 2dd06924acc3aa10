import { startAuthorization } from "@/lib/oauth/authorize";
import { errorPage } from "@/lib/http/error-page";

export async function GET(request: Request) {
  const outcome = await startAuthorization(new URL(request.url).searchParams);
  if (outcome.kind === "error_page") return errorPage(outcome.title, outcome.message, 400);
  if (outcome.kind === "error_return") {
    return errorPage(outcome.title, outcome.message, 400, { href: outcome.location, text: `Return to ${outcome.host}` });
  }
  return new Response(null, { status: 302, headers: { Location: outcome.location, "Cache-Control": "no-store" } });
}
