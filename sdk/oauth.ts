// OAuth 2.1 helpers for a public client of Agent Wallet: discovery (RFC 9728,
// then RFC 8414), dynamic registration (RFC 7591), the authorization URL with
// PKCE S256, state and resource (RFC 8707), the code exchange and the refresh.
// Only the public surface and the standard well-known locations are used; every
// endpoint comes from metadata. WebCrypto only, so this runs in Node and browsers.
import { base64url } from "./base64url";
import { dpopProof, dpopSigner, type DpopKey, type DpopSigner } from "./dpop";
import { AuthenticationError, NetworkError, OAuthError, ServerError } from "./errors";

export type FetchLike = typeof fetch;

/** Tokens as the SDK keeps them. `expiresAt` is a Unix time in milliseconds. */
export type TokenSet = {
  accessToken: string;
  tokenType: string;
  refreshToken?: string;
  scope?: string;
  expiresAt?: number;
};

export type ProtectedResourceMetadata = {
  resource: string;
  authorization_servers?: string[];
  bearer_methods_supported?: string[];
  scopes_supported?: string[];
  [field: string]: unknown;
};

export type AuthorizationServerMetadata = {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  registration_endpoint?: string;
  response_types_supported?: string[];
  grant_types_supported?: string[];
  code_challenge_methods_supported?: string[];
  token_endpoint_auth_methods_supported?: string[];
  scopes_supported?: string[];
  [field: string]: unknown;
};

/** What discovery found: the MCP resource and the authorization server that guards it. */
export type Discovery = {
  /** the MCP endpoint, which is also the resource identifier (RFC 8707 `resource`) */
  resource: string;
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  registrationEndpoint?: string;
  /** RFC 8628's endpoint, when the server offers the device authorization grant */
  deviceAuthorizationEndpoint?: string;
  scopesSupported: string[];
  resourceMetadata: ProtectedResourceMetadata;
  authorizationServerMetadata: AuthorizationServerMetadata;
};

export type ClientMetadata = {
  client_name: string;
  redirect_uris: string[];
  token_endpoint_auth_method?: "none";
  grant_types?: string[];
  response_types?: string[];
  scope?: string;
  client_uri?: string;
  software_id?: string;
  software_version?: string;
  [field: string]: unknown;
};

export type RegisteredClient = ClientMetadata & { client_id: string; client_id_issued_at?: number };

export type HttpOptions = { fetch?: FetchLike; signal?: AbortSignal; timeoutMs?: number };

const TIMEOUT_MS = 30_000;

function signalFor(options: HttpOptions): AbortSignal {
  const timeout = AbortSignal.timeout(options.timeoutMs ?? TIMEOUT_MS);
  return options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
}

/** fetch, with network failures turned into NetworkError (and an abort kept an abort). */
export async function httpFetch(url: string, init: RequestInit, options: HttpOptions = {}): Promise<Response> {
  const doFetch = options.fetch ?? globalThis.fetch;
  try {
    return await doFetch(url, { ...init, signal: init.signal ?? signalFor(options) });
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason ?? error;
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
    const message =
      error instanceof Error && error.name === "TimeoutError"
        ? "timed out"
        : `${error instanceof Error ? error.message : String(error)}${cause}`;
    throw new NetworkError(`Could not reach ${new URL(url).origin} (${message})`, { cause: error });
  }
}

async function readJson(response: Response, what: string): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new ServerError(`${what}: the server answered HTTP ${response.status} without JSON`, response.status);
  }
}

/** RFC 8414 §3.1 / RFC 9728 §3.1: the well-known segment goes between the host and the path. */
export function wellKnownUrl(identifier: string, suffix: string): string {
  const url = new URL(identifier);
  const path = url.pathname.replace(/\/+$/, "");
  return `${url.origin}/.well-known/${suffix}${path}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

async function getMetadata(
  candidates: string[],
  what: string,
  options: HttpOptions,
): Promise<{ url: string; body: Record<string, unknown> }> {
  let lastStatus = 0;
  for (const url of [...new Set(candidates)]) {
    const response = await httpFetch(url, { headers: { Accept: "application/json" } }, options);
    if (response.status === 404) {
      lastStatus = 404;
      continue;
    }
    if (!response.ok) throw new ServerError(`${what} at ${url}: HTTP ${response.status}`, response.status);
    const body = await readJson(response, what);
    if (!isObject(body)) throw new ServerError(`${what} at ${url} is not a JSON object`, response.status);
    return { url, body };
  }
  throw new ServerError(`No ${what} found (tried ${[...new Set(candidates)].join(", ")})`, lastStatus || undefined);
}

/**
 * Discovers the MCP resource and its authorization server from a base URL:
 * RFC 9728 protected-resource metadata (path-aware location first, then the
 * origin's; or the `resource_metadata` URL of a 401 challenge when given), then
 * RFC 8414 metadata of the issuer it names, whose `issuer` must match.
 */
export async function discover(baseUrl: string, options: HttpOptions & { resourceMetadataUrl?: string } = {}): Promise<Discovery> {
  const base = new URL(baseUrl);
  const candidates = [
    ...(options.resourceMetadataUrl ? [options.resourceMetadataUrl] : []),
    wellKnownUrl(base.href, "oauth-protected-resource"),
    `${base.origin}/.well-known/oauth-protected-resource`,
  ];
  const { body: prm } = await getMetadata(candidates, "protected-resource metadata", options);
  if (typeof prm.resource !== "string") throw new ServerError("protected-resource metadata has no resource");
  const resource = new URL(prm.resource);
  // A metadata document may not send our tokens to another origin than the one we asked.
  if (resource.origin !== base.origin)
    throw new ServerError(`protected-resource metadata names a resource on another origin (${resource.origin})`);
  const servers = Array.isArray(prm.authorization_servers)
    ? prm.authorization_servers.filter((entry): entry is string => typeof entry === "string")
    : [];
  if (!servers.length) throw new ServerError("protected-resource metadata names no authorization server");
  const issuer = servers[0];

  const issuerUrl = new URL(issuer);
  const { body: asm } = await getMetadata(
    [wellKnownUrl(issuer, "oauth-authorization-server"), `${issuerUrl.origin}/.well-known/oauth-authorization-server`],
    "authorization-server metadata",
    options,
  );
  if (asm.issuer !== issuer)
    throw new ServerError(`authorization-server metadata names issuer ${String(asm.issuer)}, expected ${issuer} (RFC 8414 §3.3)`);
  for (const field of ["authorization_endpoint", "token_endpoint"] as const) {
    if (typeof asm[field] !== "string") throw new ServerError(`authorization-server metadata has no ${field}`);
  }
  const methods = asm.code_challenge_methods_supported;
  if (Array.isArray(methods) && !methods.includes("S256")) throw new ServerError("the authorization server does not support PKCE S256");
  const metadata = asm as AuthorizationServerMetadata;
  return {
    resource: resource.href,
    issuer,
    authorizationEndpoint: metadata.authorization_endpoint,
    tokenEndpoint: metadata.token_endpoint,
    registrationEndpoint: metadata.registration_endpoint,
    ...(typeof metadata.device_authorization_endpoint === "string"
      ? { deviceAuthorizationEndpoint: metadata.device_authorization_endpoint }
      : {}),
    scopesSupported: metadata.scopes_supported ?? [],
    resourceMetadata: prm as ProtectedResourceMetadata,
    authorizationServerMetadata: metadata,
  };
}

/** Discovery of the protected resource only (what a client holding a token needs to find /mcp). */
export async function discoverResource(baseUrl: string, options: HttpOptions = {}): Promise<string> {
  const base = new URL(baseUrl);
  const { body } = await getMetadata(
    [wellKnownUrl(base.href, "oauth-protected-resource"), `${base.origin}/.well-known/oauth-protected-resource`],
    "protected-resource metadata",
    options,
  );
  if (typeof body.resource !== "string") throw new ServerError("protected-resource metadata has no resource");
  const resource = new URL(body.resource);
  if (resource.origin !== base.origin)
    throw new ServerError(`protected-resource metadata names a resource on another origin (${resource.origin})`);
  return resource.href;
}

async function oauthErrorFrom(response: Response, what: string): Promise<Error> {
  let body: unknown;
  try {
    body = JSON.parse(await response.text());
  } catch {
    body = undefined;
  }
  if (isObject(body) && typeof body.error === "string") {
    return new OAuthError(body.error, typeof body.error_description === "string" ? body.error_description : undefined, response.status);
  }
  return new ServerError(`${what}: HTTP ${response.status}`, response.status);
}

/** RFC 7591 registration of a public client (`token_endpoint_auth_method: none`). */
export async function register(
  discovery: Pick<Discovery, "registrationEndpoint">,
  metadata: ClientMetadata,
  options: HttpOptions = {},
): Promise<RegisteredClient> {
  if (!discovery.registrationEndpoint) throw new ServerError("the authorization server does not offer dynamic registration");
  const response = await httpFetch(
    discovery.registrationEndpoint,
    {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        ...metadata,
      }),
    },
    options,
  );
  if (response.status !== 201 && response.status !== 200) throw await oauthErrorFrom(response, "registration");
  const body = await readJson(response, "registration");
  if (!isObject(body) || typeof body.client_id !== "string")
    throw new ServerError("the registration response has no client_id", response.status);
  return body as RegisteredClient;
}

/** A PKCE code verifier (RFC 7636 §4.1): 32 random bytes, base64url, 43 characters. */
export function generateCodeVerifier(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/** The S256 challenge of a verifier: BASE64URL(SHA256(ASCII(verifier))). */
export async function codeChallengeS256(verifier: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
}

export function generateState(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(24)));
}

export type AuthorizationRequest = {
  url: string;
  state: string;
  codeVerifier: string;
  redirectUri: string;
};

/**
 * The authorization URL (RFC 6749 §4.1.1 + PKCE S256 + RFC 8707 `resource`).
 * Keep `state` and `codeVerifier`: the callback must carry the same state, and
 * the exchange needs the verifier. `scope` defaults to "mcp offline_access".
 */
export async function buildAuthorizationUrl(params: {
  discovery: Pick<Discovery, "authorizationEndpoint" | "resource">;
  clientId: string;
  redirectUri: string;
  scope?: string;
  state?: string;
  codeVerifier?: string;
}): Promise<AuthorizationRequest> {
  const state = params.state ?? generateState();
  const codeVerifier = params.codeVerifier ?? generateCodeVerifier();
  const url = new URL(params.discovery.authorizationEndpoint);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", params.clientId);
  url.searchParams.set("redirect_uri", params.redirectUri);
  url.searchParams.set("code_challenge", await codeChallengeS256(codeVerifier));
  url.searchParams.set("code_challenge_method", "S256");
  url.searchParams.set("scope", params.scope ?? "mcp offline_access");
  url.searchParams.set("resource", params.discovery.resource);
  url.searchParams.set("state", state);
  return { url: url.href, state, codeVerifier, redirectUri: params.redirectUri };
}

/**
 * Checks the query the redirect URI received and returns the code: an `error`
 * becomes an OAuthError, a state other than ours is refused (CSRF), and an
 * `iss` other than the issuer is refused (RFC 9207 mix-up defence).
 */
export function parseCallback(query: URLSearchParams, expected: { state: string; issuer?: string }): string {
  const iss = query.get("iss");
  if (expected.issuer && iss !== null && iss !== expected.issuer)
    throw new OAuthError("invalid_request", `the callback came from issuer ${iss}, expected ${expected.issuer}`);
  if (query.get("state") !== expected.state)
    throw new OAuthError("invalid_request", "the callback's state does not match the request (possible CSRF); start again");
  const error = query.get("error");
  if (error) throw new OAuthError(error, query.get("error_description") ?? undefined);
  const code = query.get("code");
  if (!code) throw new OAuthError("invalid_request", "the callback carries no code");
  return code;
}

function tokenSetFrom(body: unknown, now: number): TokenSet {
  if (!isObject(body) || typeof body.access_token !== "string") throw new ServerError("the token response has no access_token");
  return {
    accessToken: body.access_token,
    tokenType: typeof body.token_type === "string" ? body.token_type : "Bearer",
    ...(typeof body.refresh_token === "string" ? { refreshToken: body.refresh_token } : {}),
    ...(typeof body.scope === "string" ? { scope: body.scope } : {}),
    ...(typeof body.expires_in === "number" ? { expiresAt: now + body.expires_in * 1000 } : {}),
  };
}

/** A token request, with a fresh DPoP proof of `dpopKey` when given (RFC 9449 §5: the tokens are then bound to it). */
async function tokenRequest(
  tokenEndpoint: string,
  form: Record<string, string>,
  options: HttpOptions,
  dpopKey?: DpopKey | DpopSigner,
): Promise<TokenSet> {
  const now = Date.now();
  const headers: Record<string, string> = { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" };
  if (dpopKey) headers.DPoP = await dpopProof(await dpopSigner(dpopKey), "POST", tokenEndpoint);
  const response = await httpFetch(tokenEndpoint, { method: "POST", headers, body: new URLSearchParams(form).toString() }, options);
  if (!response.ok) throw await oauthErrorFrom(response, "token request");
  return tokenSetFrom(await readJson(response, "token response"), now);
}

/** RFC 8628's grant type, for registration (`grant_types`) and the token request. */
export const DEVICE_CODE_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code";

/** The device authorization response (RFC 8628 §3.2). `device_code` is the client's secret; show the rest. */
export type DeviceAuthorization = {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete?: string;
  expires_in: number;
  interval?: number;
};

/** Starts a device sign-in (RFC 8628 §3.1): the person then enters `user_code` at `verification_uri`. */
export async function startDeviceAuthorization(
  params: { discovery: Pick<Discovery, "deviceAuthorizationEndpoint" | "resource">; clientId: string; scope?: string },
  options: HttpOptions = {},
): Promise<DeviceAuthorization> {
  const endpoint = params.discovery.deviceAuthorizationEndpoint;
  if (!endpoint) throw new ServerError("the authorization server does not offer the device authorization grant");
  const response = await httpFetch(
    endpoint,
    {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
      body: new URLSearchParams({
        client_id: params.clientId,
        scope: params.scope ?? "mcp offline_access",
        resource: params.discovery.resource,
      }).toString(),
    },
    options,
  );
  if (!response.ok) throw await oauthErrorFrom(response, "device authorization");
  const body = await readJson(response, "device authorization");
  if (!isObject(body) || typeof body.device_code !== "string" || typeof body.user_code !== "string")
    throw new ServerError("the device authorization response has no device_code or user_code", response.status);
  return body as DeviceAuthorization;
}

/**
 * Polls the token endpoint until the person decides (RFC 8628 §3.4–3.5): waits `interval` seconds between polls
 * (5 more after each slow_down), and gives up when the code expires. Rejects with an OAuthError `access_denied`
 * or `expired_token`, or with the signal's reason when aborted.
 */
export async function pollDeviceToken(
  params: {
    tokenEndpoint: string;
    clientId: string;
    authorization: DeviceAuthorization;
    resource?: string;
    dpopKey?: DpopKey | DpopSigner;
  },
  options: HttpOptions = {},
): Promise<TokenSet> {
  let interval = params.authorization.interval ?? 5;
  const deadline = Date.now() + params.authorization.expires_in * 1000;
  for (;;) {
    await sleep(interval * 1000, options.signal);
    if (Date.now() >= deadline) throw new OAuthError("expired_token", "the code expired before it was approved");
    try {
      return await tokenRequest(
        params.tokenEndpoint,
        {
          grant_type: DEVICE_CODE_GRANT_TYPE,
          client_id: params.clientId,
          device_code: params.authorization.device_code,
          ...(params.resource ? { resource: params.resource } : {}),
        },
        options,
        params.dpopKey,
      );
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      if (error.code === "slow_down") interval += 5;
      else if (error.code !== "authorization_pending") throw error;
    }
  }
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** RFC 7009: ends a token (and with it, here, the grant it belongs to). Unknown tokens are not an error. */
export async function revokeToken(
  params: { revocationEndpoint: string; clientId: string; token: string },
  options: HttpOptions = {},
): Promise<void> {
  const response = await httpFetch(
    params.revocationEndpoint,
    {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
      body: new URLSearchParams({ client_id: params.clientId, token: params.token }).toString(),
    },
    options,
  );
  if (!response.ok) throw await oauthErrorFrom(response, "token revocation");
}

/** The authorization-code exchange (public client: no secret, the PKCE verifier instead); DPoP-bound with `dpopKey`. */
export function exchangeCode(
  params: {
    tokenEndpoint: string;
    clientId: string;
    code: string;
    redirectUri: string;
    codeVerifier: string;
    resource?: string;
    dpopKey?: DpopKey | DpopSigner;
  },
  options: HttpOptions = {},
): Promise<TokenSet> {
  return tokenRequest(
    params.tokenEndpoint,
    {
      grant_type: "authorization_code",
      client_id: params.clientId,
      code: params.code,
      redirect_uri: params.redirectUri,
      code_verifier: params.codeVerifier,
      ...(params.resource ? { resource: params.resource } : {}),
    },
    options,
    params.dpopKey,
  );
}

/**
 * One refresh. The refresh token rotates: the one passed in is spent the moment
 * this succeeds, so store the returned `refreshToken` before using the tokens.
 * Presenting a spent refresh token again revokes the client. A refresh token bound to a DPoP key is refreshed only
 * with a proof of that key (`dpopKey`).
 */
export function refresh(
  params: { tokenEndpoint: string; clientId: string; refreshToken: string; resource?: string; dpopKey?: DpopKey | DpopSigner },
  options: HttpOptions = {},
): Promise<TokenSet> {
  return tokenRequest(
    params.tokenEndpoint,
    {
      grant_type: "refresh_token",
      client_id: params.clientId,
      refresh_token: params.refreshToken,
      ...(params.resource ? { resource: params.resource } : {}),
    },
    options,
    params.dpopKey,
  );
}

/**
 * The parameters of a `WWW-Authenticate: Bearer …` challenge (RFC 6750 §3, RFC 9728 §5.1), or of the one of
 * `scheme` (DPoP, RFC 9449 §7.1) when the header holds several.
 */
export function parseBearerChallenge(header: string | null, scheme: "Bearer" | "DPoP" = "Bearer"): Record<string, string> | undefined {
  if (!header) return undefined;
  const other = scheme === "Bearer" ? "DPoP" : "Bearer";
  const match = new RegExp(`(?:^|,)\\s*${scheme}\\b((?:(?!,\\s*${other}\\b).)*)`, "is").exec(header);
  if (!match) return undefined;
  const params: Record<string, string> = {};
  const pattern = /([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g;
  for (const part of match[1].matchAll(pattern))
    params[part[1].toLowerCase()] = part[2] !== undefined ? part[2].replace(/\\(.)/g, "$1") : part[3];
  return params;
}

/** An AuthenticationError built from a 401's challenge: a DPoP challenge's error, if any, and the Bearer one's metadata. */
export function authenticationErrorFrom(response: Response, message: string): AuthenticationError {
  const header = response.headers.get("www-authenticate");
  const bearer = parseBearerChallenge(header);
  const challenge: Record<string, string | undefined> = {
    ...bearer,
    ...parseBearerChallenge(header, "DPoP"),
    resource_metadata: bearer?.resource_metadata,
  };
  const description = challenge.error_description;
  return new AuthenticationError(description ? `${message}: ${description}` : message, description, challenge.resource_metadata);
}
