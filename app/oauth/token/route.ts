import { exchangeToken, TOKEN_BODY_LIMIT } from "@/lib/oauth/token";
import { InvalidRequestError, oauthErrorResponse } from "@/lib/oauth/errors";
import { json, NO_STORE, preflight, PUBLIC_CORS, readBody } from "@/lib/http/respond";

export async function POST(request: Request) {
  try {
    const type = request.headers.get("content-type") ?? "";
    if (!type.toLowerCase().startsWith("application/x-www-form-urlencoded")) {
      throw new InvalidRequestError("The request body must be application/x-www-form-urlencoded");
    }
    const body = await readBody(request, TOKEN_BODY_LIMIT);
    if (body === null) throw new InvalidRequestError(`The request body may be at most ${TOKEN_BODY_LIMIT} bytes`);
    const tokens = await exchangeToken(new URLSearchParams(body));
    return json(tokens, { headers: { ...PUBLIC_CORS, ...NO_STORE } });
  } catch (error) {
    return oauthErrorResponse(error);
  }
}

export const OPTIONS = preflight;
