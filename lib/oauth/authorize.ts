import { db } from "@/lib/db";
import { config } from "@/lib/config";
import { randomSecret } from "@/lib/crypto";
import { addSeconds, systemClock, type Clock } from "@/lib/clock";
import { InvalidRequestError, OAuthEndpointError, UnsupportedResponseTypeError } from "./errors";
import { PKCE_VALUE } from "./pkce";
import { formatScope, parseScope } from "./scope";
import { ClientMetadataDocumentError } from "./client-metadata-document";
import { findOAuthClient, redirectUrisOf } from "./clients";
import { redirectUriRegistered } from "./redirect-uri";
import { registeredGrantTypes } from "./registration";
import { checkResource } from "./resource";
import { isLoopbackHostname } from "@/lib/http/loopback";

/** How long a person has to decide on the consent screen. */
const AUTHORIZATION_REQUEST_TTL_SECONDS = 10 * 60;
const MAX_STATE = 2000;

/** The outcome of GET /oauth/authorize. */
export type AuthorizeOutcome =
  /** client or redirect URI cannot be trusted: show a page, never redirect */
  | { kind: "error_page"; title: string; message: string }
  /** an error told to a client on this machine (a loopback redirect URI): sent at once */
  | { kind: "redirect"; location: string }
  /**
   * an error for a client elsewhere: shown on a page with a link back, never an automatic redirect — anyone can
   * register a redirect URI, and an automatic error redirect would make this server an open redirector
   * (RFC 9700 §4.11.2, docs/decisions/0009-authorization-error-redirects.md)
   */
  | { kind: "error_return"; title: string; message: string; location: string; host: string }
  /** a valid request, stored and waiting for the person on the consent screen */
  | { kind: "consent"; location: string; requestId: string };

/** The redirect URI with `params` added to its query (RFC 6749 §4.1.2; `iss` per RFC 9207). */
export function redirectWith(redirectUri: string, params: Record<string, string | null | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value != null) url.searchParams.append(name, value);
  return url.toString();
}

/** The scope a client asks for; one that did not register the refresh_token grant cannot stay connected. */
export function requestedScope(client: { metadata: string }, scope: string | null): string {
  const refreshAllowed = registeredGrantTypes(client).includes("refresh_token");
  return formatScope(parseScope(scope).filter((entry) => entry !== "offline_access" || refreshAllowed));
}

function single(params: URLSearchParams, name: string): string | null {
  const values = params.getAll(name);
  if (values.length > 1) throw new InvalidRequestError(`${name} must not be repeated`);
  return values[0] ?? null;
}

/**
 * Validates an authorization request (docs/product.md §5). Only a known client with a registered
 * redirect URI (exact, but for a loopback IP's port) earns a redirect; every other error is a page.
 */
export async function startAuthorization(params: URLSearchParams, clock: Clock = systemClock): Promise<AuthorizeOutcome> {
  const clientIds = params.getAll("client_id");
  const redirectUris = params.getAll("redirect_uri");
  if (clientIds.length !== 1 || !clientIds[0]) {
    return { kind: "error_page", title: "Missing client", message: "The request must name exactly one client_id." };
  }
  let client;
  try {
    client = await findOAuthClient(clientIds[0], clock);
  } catch (error) {
    if (!(error instanceof ClientMetadataDocumentError)) throw error;
    return { kind: "error_page", title: "Application not verified", message: error.message };
  }
  if (!client) {
    return { kind: "error_page", title: "Unknown application", message: "This application is not registered with Agent Wallet." };
  }
  if (client.status !== "active") {
    return {
      kind: "error_page",
      title: "Application revoked",
      message: "This application's access was revoked. It has to register again.",
    };
  }
  if (redirectUris.length !== 1 || !redirectUriRegistered(redirectUris[0], redirectUrisOf(client))) {
    return {
      kind: "error_page",
      title: "Redirect address not registered",
      message: "The redirect_uri does not match an address this application registered, so Agent Wallet will not send you there.",
    };
  }
  const redirectUri = redirectUris[0];
  const { baseUrl } = config();
  const rawState = params.getAll("state");
  const state = rawState.length === 1 && rawState[0].length <= MAX_STATE ? rawState[0] : null;

  try {
    if (rawState.length > 1) throw new InvalidRequestError("state must not be repeated");
    if (rawState[0] && rawState[0].length > MAX_STATE) throw new InvalidRequestError(`state may be at most ${MAX_STATE} characters`);
    const responseType = single(params, "response_type");
    if (!responseType) throw new InvalidRequestError("response_type is required");
    if (responseType !== "code") throw new UnsupportedResponseTypeError();
    const challenge = single(params, "code_challenge");
    const method = single(params, "code_challenge_method");
    if (!challenge) throw new InvalidRequestError("code_challenge is required: PKCE is mandatory");
    if (!method) throw new InvalidRequestError("code_challenge_method is required and must be S256");
    if (method !== "S256") throw new InvalidRequestError("code_challenge_method must be S256");
    if (!PKCE_VALUE.test(challenge) || challenge.length !== 43)
      throw new InvalidRequestError("code_challenge must be the 43-character base64url SHA-256 of the verifier");
    // A client that did not register the refresh_token grant cannot stay connected.
    const scope = requestedScope(client, single(params, "scope"));
    const resources = params.getAll("resource");
    checkResource(resources);
    const now = clock();
    const request = await db().authorizationRequest.create({
      data: {
        id: randomSecret(24),
        clientId: client.id,
        redirectUri,
        codeChallenge: challenge,
        scope,
        state,
        resource: resources[0] ?? null,
        createdAt: now,
        expiresAt: addSeconds(now, AUTHORIZATION_REQUEST_TTL_SECONDS),
      },
    });
    const consent = new URL("/consent", config().appUrl);
    consent.searchParams.set("request", request.id);
    return { kind: "consent", location: consent.toString(), requestId: request.id };
  } catch (error) {
    if (!(error instanceof OAuthEndpointError)) throw error;
    const location = redirectWith(redirectUri, { error: error.code, error_description: error.message, state, iss: baseUrl });
    const target = new URL(redirectUri);
    if (isLoopbackHostname(target.hostname)) return { kind: "redirect", location };
    return { kind: "error_return", title: "This request cannot be accepted", message: error.message, location, host: target.host };
  }
}
