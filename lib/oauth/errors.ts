import { HttpError } from "@/lib/http/errors";

/** An OAuth error (RFC 6749 §5.2, RFC 7591 §3.2.2): `{error, error_description}`. */
export class OAuthError extends HttpError {
  constructor(
    readonly code: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
    this.name = "OAuthError";
  }

  toResponseObject() {
    return { error: this.code, error_description: this.description };
  }
}

export class InvalidRequestError extends OAuthError {
  constructor(description: string) {
    super("invalid_request", description);
  }
}

export class InvalidClientError extends OAuthError {
  constructor(description = "Unknown client_id") {
    super("invalid_client", description, 401);
  }
}

export class InvalidGrantError extends OAuthError {
  constructor(description: string) {
    super("invalid_grant", description);
  }
}

export class InvalidScopeError extends OAuthError {
  constructor(description: string) {
    super("invalid_scope", description);
  }
}

export class UnsupportedGrantTypeError extends OAuthError {
  constructor(grantType: string) {
    super("unsupported_grant_type", `grant_type ${JSON.stringify(grantType)} is not supported; use authorization_code or refresh_token`);
  }
}

export class UnsupportedResponseTypeError extends OAuthError {
  constructor() {
    super("unsupported_response_type", "response_type must be code");
  }
}

export class InvalidTargetError extends OAuthError {
  constructor(description: string) {
    super("invalid_target", description);
  }
}

export class AccessDeniedError extends OAuthError {
  constructor(description = "The user denied the request") {
    super("access_denied", description, 403);
  }
}

export class InvalidClientMetadataError extends OAuthError {
  constructor(description: string) {
    super("invalid_client_metadata", description);
  }
}

export class InvalidRedirectUriError extends OAuthError {
  constructor(description: string) {
    super("invalid_redirect_uri", description);
  }
}

/** A missing or unusable bearer on a protected resource (RFC 6750 §3). */
export class InvalidTokenError extends OAuthError {
  constructor(
    description: string,
    /** false when no token was presented at all: then no error code goes in the challenge. */
    readonly tokenPresented = true,
  ) {
    super("invalid_token", description, 401);
  }
}
