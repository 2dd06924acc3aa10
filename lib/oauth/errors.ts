import { HttpError, RateLimitedError, UNAVAILABLE_RETRY_AFTER_SECONDS } from "@/lib/http/errors";
import { errorResponse, PUBLIC_CORS } from "@/lib/http/respond";

/**
 * An error of the OAuth endpoints (RFC 6749 §5.2, RFC 7591 §3.2.2): `{error, error_description}`.
 * Named apart from the SDK's client-side `OAuthError`, which is what a client receives.
 */
export class OAuthEndpointError extends HttpError {
  toResponseObject() {
    return { error: this.code, error_description: this.message };
  }
}

export class InvalidRequestError extends OAuthEndpointError {
  constructor(description: string) {
    super("invalid_request", description);
  }
}

export class InvalidClientError extends OAuthEndpointError {
  // Clients here are public (token_endpoint_auth_method "none"); a 401 still names a scheme (RFC 9110 §15.5.2).
  readonly headers = { "WWW-Authenticate": 'Basic realm="agent-wallet"' };

  constructor(description = "Unknown client_id") {
    super("invalid_client", description, 401);
  }
}

export class InvalidGrantError extends OAuthEndpointError {
  constructor(description: string) {
    super("invalid_grant", description);
  }
}

export class InvalidScopeError extends OAuthEndpointError {
  constructor(description: string) {
    super("invalid_scope", description);
  }
}

export class UnsupportedGrantTypeError extends OAuthEndpointError {
  constructor(grantType: string, supported: readonly string[]) {
    super("unsupported_grant_type", `grant_type ${JSON.stringify(grantType)} is not supported; use ${supported.join(", ")}`);
  }
}

/** RFC 6749 §5.2: the client did not register the grant type it tries to use. */
export class UnauthorizedClientError extends OAuthEndpointError {
  constructor(description: string) {
    super("unauthorized_client", description);
  }
}

/** RFC 8628 §3.5's answers to a device polling before the person decided, too fast, or too late, or after a "no". */
export class DeviceAuthorizationPendingError extends OAuthEndpointError {
  constructor() {
    super("authorization_pending", "The person has not approved this device yet; keep polling at the interval");
  }
}

export class SlowDownError extends OAuthEndpointError {
  constructor(interval: number) {
    super("slow_down", `Polled too soon: wait at least ${interval} seconds between requests from now on`);
  }
}

export class AccessDeniedError extends OAuthEndpointError {
  constructor(description: string) {
    super("access_denied", description);
  }
}

export class ExpiredTokenError extends OAuthEndpointError {
  constructor() {
    super("expired_token", "The device code expired; start the sign-in again");
  }
}

export class UnsupportedResponseTypeError extends OAuthEndpointError {
  constructor() {
    super("unsupported_response_type", "response_type must be code");
  }
}

export class InvalidTargetError extends OAuthEndpointError {
  constructor(description: string) {
    super("invalid_target", description);
  }
}

export class InvalidClientMetadataError extends OAuthEndpointError {
  constructor(description: string) {
    super("invalid_client_metadata", description);
  }
}

export class InvalidRedirectUriError extends OAuthEndpointError {
  constructor(description: string) {
    super("invalid_redirect_uri", description);
  }
}

/** A missing or unusable bearer on a protected resource (RFC 6750 §3). */
export class InvalidTokenError extends OAuthEndpointError {
  constructor(
    description: string,
    /** false when no token was presented at all: then no error code goes in the challenge. */
    readonly tokenPresented = true,
    /** the scheme whose challenge carries the error: DPoP for a bound token, or one sent with the DPoP scheme */
    readonly scheme: "Bearer" | "DPoP" = "Bearer",
  ) {
    super("invalid_token", description, 401);
  }
}

/** RFC 9449 §5 and §7.1: a DPoP proof missing, malformed or not for this request (400 at the token endpoint, 401 at /mcp). */
export class InvalidDpopProofError extends OAuthEndpointError {
  constructor(description: string, status: 400 | 401 = 400) {
    super("invalid_dpop_proof", description, status);
  }
}

/** A valid bearer that lacks a scope the resource needs (RFC 6750 §3.1): 403, naming the scope to ask for. */
export class InsufficientScopeError extends OAuthEndpointError {
  constructor(readonly scope: string) {
    super("insufficient_scope", `The access token lacks the ${scope} scope`, 403);
  }
}

/** RFC 6749 §4.1.2.1's code for a server that cannot answer for now, with Retry-After. */
class TemporarilyUnavailableError extends OAuthEndpointError {
  readonly headers = { "Retry-After": String(UNAVAILABLE_RETRY_AFTER_SECONDS) };

  constructor() {
    super("temporarily_unavailable", "The service cannot reach its database right now; try again in a few seconds", 503);
  }
}

/**
 * A spent rate limit on an OAuth endpoint: 429, Retry-After, and RFC 6749's `temporarily_unavailable` ("unable
 * to handle the request due to a temporary overloading"). Not RFC 8628's `slow_down`: that one is defined only
 * for device-code polling, where it means "keep polling, 5 s slower", which a code or refresh client does not do.
 */
class OAuthRateLimitedError extends OAuthEndpointError {
  constructor(limited: RateLimitedError) {
    super("temporarily_unavailable", limited.message, 429);
    Object.assign(this.headers, limited.headers);
  }
}

/** An error of the OAuth endpoints as a response, open to browser-based clients; the unexpected is `server_error`. */
export function oauthErrorResponse(error: unknown, headers: Record<string, string> = {}): Response {
  return errorResponse(error, {
    headers: { ...PUBLIC_CORS, ...headers },
    unexpected: new OAuthEndpointError("server_error", "The server could not complete the request", 500),
    unavailable: new TemporarilyUnavailableError(),
    limited: (limited) => new OAuthRateLimitedError(limited),
  });
}
