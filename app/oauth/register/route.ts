import { parseRegistration, registerClient, REGISTRATION_BODY_LIMIT } from "@/lib/oauth/registration";
import { InvalidClientMetadataError, oauthErrorResponse } from "@/lib/oauth/errors";
import { checkAuthorizationHeader } from "@/lib/oauth/form";
import { json, NO_STORE, preflight, PUBLIC_CORS, readBody } from "@/lib/http/respond";
import { clientIp } from "@/lib/limits/client-ip";
import { spendRateLimit } from "@/lib/limits/rate-limit";

export async function POST(request: Request) {
  try {
    checkAuthorizationHeader(request);
    await spendRateLimit("register", { ip: clientIp(request.headers) });
    const body = await readBody(request, REGISTRATION_BODY_LIMIT);
    if (body === null) throw new InvalidClientMetadataError(`The request body may be at most ${REGISTRATION_BODY_LIMIT} bytes`);
    const client = await registerClient(parseRegistration(body));
    return json(client, { status: 201, headers: { ...PUBLIC_CORS, ...NO_STORE } });
  } catch (error) {
    return oauthErrorResponse(error);
  }
}

export const OPTIONS = preflight;
