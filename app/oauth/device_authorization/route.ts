import { startDeviceAuthorization } from "@/lib/oauth/device-authorization";
import { oauthErrorResponse } from "@/lib/oauth/errors";
import { readOAuthForm } from "@/lib/oauth/form";
import { json, NO_STORE, preflight, PUBLIC_CORS } from "@/lib/http/respond";

export async function POST(request: Request) {
  try {
    const answer = await startDeviceAuthorization(await readOAuthForm(request, "deviceAuthorization"));
    return json(answer, { headers: { ...PUBLIC_CORS, ...NO_STORE } });
  } catch (error) {
    return oauthErrorResponse(error);
  }
}

export const OPTIONS = preflight;
