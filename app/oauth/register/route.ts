import { parseRegistration, registerClient, REGISTRATION_BODY_LIMIT } from "@/lib/oauth/registration";
import { InvalidClientMetadataError, oauthErrorResponse } from "@/lib/oauth/errors";
import { json, NO_STORE, preflight, PUBLIC_CORS, readBody } from "@/lib/http/respond";

export async function POST(request: Request) {
  try {
    const body = await readBody(request, REGISTRATION_BODY_LIMIT);
    if (body === null) throw new InvalidClientMetadataError(`The request body may be at most ${REGISTRATION_BODY_LIMIT} bytes`);
    const client = await registerClient(parseRegistration(body));
    return json(client, { status: 201, headers: { ...PUBLIC_CORS, ...NO_STORE } });
  } catch (error) {
    return oauthErrorResponse(error);
  }
}

export const OPTIONS = preflight;
