import { revokeToken } from "@/lib/oauth/revocation";
import { oauthErrorResponse } from "@/lib/oauth/errors";
import { readOAuthForm } from "@/lib/oauth/form";
import { NO_STORE, preflight, PUBLIC_CORS } from "@/lib/http/respond";

export async function POST(request: Request) {
  try {
    await revokeToken(await readOAuthForm(request, "revoke"));
    return new Response(null, { status: 200, headers: { ...PUBLIC_CORS, ...NO_STORE } });
  } catch (error) {
    return oauthErrorResponse(error);
  }
}

export const OPTIONS = preflight;
