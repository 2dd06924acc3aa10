import { readBody } from "@/lib/http/respond";
import { MAX_AUTHORIZATION_HEADER } from "@/lib/http/input-limits";
import { clientIp } from "@/lib/limits/client-ip";
import { spendRateLimit } from "@/lib/limits/rate-limit";
import { systemClock, type Clock } from "@/lib/clock";
import { isOAuthClient } from "./clients";
import { InvalidClientError, InvalidRequestError } from "./errors";

const FORM_BODY_LIMIT = 16 * 1024;

/**
 * Clients here are public and send no Authorization header; one larger than any credential is refused before
 * anything else (registration, token, revocation).
 */
export function checkAuthorizationHeader(request: Request): void {
  if ((request.headers.get("authorization")?.length ?? 0) > MAX_AUTHORIZATION_HEADER) {
    throw new InvalidRequestError(`The Authorization header may be at most ${MAX_AUTHORIZATION_HEADER} characters`);
  }
}

/**
 * The body of the token, revocation and device authorization endpoints (application/x-www-form-urlencoded, at most 16 KiB), once the
 * endpoint's rate limits by address and by the client_id it names allow it.
 */
export async function readOAuthForm(request: Request, endpoint: "token" | "revoke" | "deviceAuthorization"): Promise<URLSearchParams> {
  checkAuthorizationHeader(request);
  const type = request.headers.get("content-type") ?? "";
  if (!type.toLowerCase().startsWith("application/x-www-form-urlencoded")) {
    throw new InvalidRequestError("The request body must be application/x-www-form-urlencoded");
  }
  const body = await readBody(request, FORM_BODY_LIMIT);
  if (body === null) throw new InvalidRequestError(`The request body may be at most ${FORM_BODY_LIMIT} bytes`);
  const form = new URLSearchParams(body);
  await spendRateLimit(endpoint, { ip: clientIp(request.headers), client: form.get("client_id") ?? "" });
  return form;
}

/** One form parameter: repeated is invalid_request, and so is a missing required one. */
export function formParam(form: URLSearchParams, name: string, required = true): string | null {
  const values = form.getAll(name);
  if (values.length > 1) throw new InvalidRequestError(`${name} must not be repeated`);
  if (!values[0]) {
    if (required) throw new InvalidRequestError(`${name} is required`);
    return null;
  }
  return values[0];
}

/**
 * Client authentication of a public client (token_endpoint_auth_method `none`): `client_id` must name
 * a registered OAuth client or a usable client metadata document. Returns its id.
 */
export async function authenticateClient(form: URLSearchParams, clock: Clock = systemClock): Promise<string> {
  const clientId = formParam(form, "client_id")!;
  if (!(await isOAuthClient(clientId, clock))) throw new InvalidClientError();
  return clientId;
}
