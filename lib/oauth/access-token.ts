import { createHmac } from "node:crypto";
import { jwtVerify, errors as joseErrors, type JWTPayload } from "jose";
import { LRUCache } from "lru-cache";
import { config } from "@/lib/config";
import { randomId, sha256Hex } from "@/lib/crypto";
import type { Clock } from "@/lib/clock";
import { InvalidTokenError } from "./errors";

export const ACCESS_TOKEN_TTL_SECONDS = 3600;
/** The JOSE header `typ` of an access token (RFC 9068 §2.1); jose also accepts `application/at+jwt`, as §4 asks. */
const ACCESS_TOKEN_TYPE = "at+jwt";

export type AccessTokenClaims = {
  sub: string;
  client_id: string;
  scope: string;
  /** the grant this token carries; /mcp loads it on every call */
  grant_id: string;
  /** RFC 9449: the thumbprint of the DPoP key the token is bound to, signed as `cnf.jkt`; absent for a bearer token */
  jkt?: string;
};

/**
 * Each configured secret imported once as a WebCrypto HMAC key: jose would otherwise import raw key bytes on
 * every sign and verify, which cost as much as the verification itself on the /mcp hot path.
 */
const keyCache = new Map<string, Promise<CryptoKey>>();
function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keyCache.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", Buffer.from(secret, "base64url"), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
    keyCache.set(secret, key);
  }
  return key;
}

/** Each configured secret's bytes, decoded once, for signing. */
const signingKeys = new Map<string, Buffer>();

const base64urlJson = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");

/**
 * Signs an access token with the first configured key (HS256, with its kid). By hand with node:crypto's HMAC, which
 * is synchronous: jose signs through WebCrypto, an asynchronous job on libuv's thread pool that cost a seventh of a
 * code exchange's CPU (docs/performance.md). A JWS with HS256 is exactly this; verification stays with jose.
 */
export function signAccessToken(claims: AccessTokenClaims, clock: Clock): string {
  const { baseUrl, mcpResource, jwtKeys } = config();
  const [current] = jwtKeys;
  const issuedAt = Math.floor(clock().getTime() / 1000);
  const header = { alg: "HS256", typ: ACCESS_TOKEN_TYPE, kid: current.kid };
  const payload = {
    client_id: claims.client_id,
    scope: claims.scope,
    grant_id: claims.grant_id,
    ...(claims.jkt ? { cnf: { jkt: claims.jkt } } : {}),
    iss: baseUrl,
    sub: claims.sub,
    aud: mcpResource,
    jti: randomId(),
    iat: issuedAt,
    exp: issuedAt + ACCESS_TOKEN_TTL_SECONDS,
  };
  let key = signingKeys.get(current.secret);
  if (!key) signingKeys.set(current.secret, (key = Buffer.from(current.secret, "base64url")));
  const signingInput = `${base64urlJson(header)}.${base64urlJson(payload)}`;
  return `${signingInput}.${createHmac("sha256", key).update(signingInput).digest("base64url")}`;
}

/** Verified claims, as every /mcp call reads them: `cnf.jkt` read out as `jkt`. */
type VerifiedClaims = Readonly<AccessTokenClaims & JWTPayload>;

/**
 * Tokens this process has verified, by their SHA-256, until they expire. An agent sends the same token on every
 * call for an hour, and a WebCrypto verification (a round trip through libuv's thread pool, with every async
 * hook the process has) cost a quarter of a read call (docs/performance.md). Nothing that can change is cached:
 * the keys are fixed for the process's life, and whether the grant and its client are still active is checked
 * on every call (lib/oauth/bearer.ts). Keyed by digest, so the map's lookups compare digests, never tokens; the
 * least recently used of 5,000 makes room, a bound on memory whatever tokens arrive.
 */
const verified = new LRUCache<string, VerifiedClaims>({ max: 5_000 });

/**
 * Verifies signature (any configured key, chosen by kid), type (`at+jwt`, RFC 9068 §4: no other JWT signed with
 * these keys passes for an access token), issuer, audience and expiry. Whether the grant and client are still
 * active is the caller's check. Checked once per token: the result is remembered (above).
 */
export async function verifyAccessToken(token: string, clock: Clock): Promise<VerifiedClaims> {
  const digest = sha256Hex(token);
  const known = verified.get(digest);
  if (known && (known.exp as number) > Math.floor(clock().getTime() / 1000)) return known;
  verified.delete(digest);
  const claims = Object.freeze(await verifyAccessTokenSignature(token, clock));
  verified.set(digest, claims);
  return claims;
}

async function verifyAccessTokenSignature(token: string, clock: Clock): Promise<AccessTokenClaims & JWTPayload> {
  const { baseUrl, mcpResource, jwtKeys } = config();
  try {
    const { payload } = await jwtVerify(
      token,
      (header) => {
        const key = jwtKeys.find((candidate) => candidate.kid === header.kid);
        if (!key) throw new InvalidTokenError("The access token was signed with an unknown key");
        return hmacKey(key.secret);
      },
      {
        algorithms: ["HS256"],
        typ: ACCESS_TOKEN_TYPE,
        issuer: baseUrl,
        audience: mcpResource,
        currentDate: clock(),
        requiredClaims: ["sub", "exp", "iat"],
      },
    );
    if (typeof payload.grant_id !== "string" || typeof payload.client_id !== "string" || typeof payload.scope !== "string") {
      throw new InvalidTokenError("The access token lacks its grant");
    }
    const jkt = (payload.cnf as { jkt?: unknown } | undefined)?.jkt;
    return { ...payload, ...(typeof jkt === "string" ? { jkt } : {}) } as AccessTokenClaims & JWTPayload;
  } catch (error) {
    if (error instanceof InvalidTokenError) throw error;
    if (error instanceof joseErrors.JWTExpired) throw new InvalidTokenError("The access token expired");
    if (error instanceof joseErrors.JWTClaimValidationFailed && error.claim === "typ")
      throw new InvalidTokenError(`The token is not an access token (its typ must be ${ACCESS_TOKEN_TYPE})`);
    if (error instanceof joseErrors.JWTClaimValidationFailed)
      throw new InvalidTokenError(`The access token is not for this resource (${error.claim})`);
    throw new InvalidTokenError("The access token is invalid");
  }
}
