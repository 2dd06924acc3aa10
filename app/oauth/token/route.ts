import { exchangeToken } from "@/lib/oauth/token";
import { oauthErrorResponse } from "@/lib/oauth/errors";
import { readOAuthForm } from "@/lib/oauth/form";
import { json, NO_STORE, preflight, PUBLIC_CORS } from "@/lib/http/respond";
import { serveDirectly } from "@/lib/http/direct-routes";

export async function POST(request: Request) {
  try {
    const tokens = await exchangeToken(await readOAuthForm(request, "token"), request.headers.get("dpop"));
    return json(tokens, { headers: { ...PUBLIC_CORS, ...NO_STORE } });
  } catch (error) {
    return oauthErrorResponse(error);
  }
}

export const OPTIONS = preflight;

// Agents refresh in bursts: past Next's routing, as /mcp (docs/decisions/0011-mcp-beside-next.md).
serveDirectly("/oauth/token", { POST, OPTIONS });
