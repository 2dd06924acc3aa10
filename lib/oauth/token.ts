import { db } from "@/lib/db";
import { recordAudit } from "@/lib/audit";
import { randomSecret, safeEqual, sha256Hex } from "@/lib/crypto";
import { addSeconds, systemClock, type Clock } from "@/lib/clock";
import { ACCESS_TOKEN_TTL_SECONDS, signAccessToken } from "./access-token";
import { revokeClient } from "./clients";
import { InvalidClientError, InvalidGrantError, InvalidRequestError, InvalidScopeError, UnsupportedGrantTypeError } from "./errors";
import { PKCE_VALUE, verifyPkce } from "./pkce";
import { formatScope, hasScope, parseScope } from "./scope";

export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
export const TOKEN_BODY_LIMIT = 16 * 1024;

export type TokenResponse = {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token?: string;
  scope: string;
};

function param(form: URLSearchParams, name: string, required = true): string | null {
  const values = form.getAll(name);
  if (values.length > 1) throw new InvalidRequestError(`${name} must not be repeated`);
  if (!values[0]) {
    if (required) throw new InvalidRequestError(`${name} is required`);
    return null;
  }
  return values[0];
}

/** POST /oauth/token: both grants of the seed, from a parsed form body. */
export async function exchangeToken(form: URLSearchParams, clock: Clock = systemClock): Promise<TokenResponse> {
  const grantType = param(form, "grant_type")!;
  if (grantType !== "authorization_code" && grantType !== "refresh_token") throw new UnsupportedGrantTypeError(grantType);
  const clientId = param(form, "client_id")!;
  const client = await db().client.findUnique({ where: { id: clientId } });
  if (!client || client.kind !== "oauth") throw new InvalidClientError();
  return grantType === "authorization_code" ? exchangeCode(client.id, form, clock) : refresh(client.id, form, clock);
}

async function exchangeCode(clientId: string, form: URLSearchParams, clock: Clock): Promise<TokenResponse> {
  const code = param(form, "code")!;
  const redirectUri = param(form, "redirect_uri")!;
  const verifier = param(form, "code_verifier")!;
  if (!PKCE_VALUE.test(verifier)) throw new InvalidRequestError("code_verifier must be 43 to 128 unreserved characters");
  const now = clock();
  const codeHash = sha256Hex(code);
  const stored = await db().authorizationCode.findUnique({ where: { codeHash } });
  if (!stored) throw new InvalidGrantError("The authorization code is invalid");
  if (stored.usedAt) return replayDetected(stored.clientId, "authorization_code", clock);
  if (stored.clientId !== clientId) throw new InvalidGrantError("The authorization code was issued to another client");
  if (stored.expiresAt <= now) throw new InvalidGrantError("The authorization code expired");
  if (!safeEqual(stored.redirectUri, redirectUri)) throw new InvalidGrantError("redirect_uri does not match the authorization request");
  if (!verifyPkce(verifier, stored.codeChallenge)) {
    // A wrong verifier may be a thief holding the code: make it unusable (expired), not used.
    await db().authorizationCode.updateMany({ where: { codeHash, usedAt: null }, data: { expiresAt: now } });
    throw new InvalidGrantError("PKCE verification failed");
  }
  // Checked before the claim: once the code is claimed, concurrent replays of it
  // revoke the client, and that must not turn the one winning exchange into an error.
  const grant = await activeGrant(stored.grantId);
  // The single atomic step: of any number of concurrent exchanges, one updates the row.
  const claimed = await db().authorizationCode.updateMany({ where: { codeHash, usedAt: null, expiresAt: { gt: now } }, data: { usedAt: now } });
  if (claimed.count === 0) {
    const again = await db().authorizationCode.findUnique({ where: { codeHash } });
    if (again?.usedAt) return replayDetected(clientId, "authorization_code", clock);
    throw new InvalidGrantError("The authorization code expired");
  }
  return issueTokens({ grant, scope: stored.scope, event: "token.issued", clock });
}

async function refresh(clientId: string, form: URLSearchParams, clock: Clock): Promise<TokenResponse> {
  const token = param(form, "refresh_token")!;
  const requestedScope = param(form, "scope", false);
  const now = clock();
  const tokenHash = sha256Hex(token);
  const stored = await db().refreshToken.findUnique({ where: { tokenHash } });
  if (!stored) throw new InvalidGrantError("The refresh token is invalid");
  if (stored.rotatedAt) return replayDetected(stored.clientId, "refresh_token", clock);
  if (stored.clientId !== clientId) throw new InvalidGrantError("The refresh token was issued to another client");
  if (stored.expiresAt <= now) throw new InvalidGrantError("The refresh token expired");
  let scope = stored.scope;
  if (requestedScope !== null) {
    const requested = parseScope(requestedScope);
    const granted = stored.scope.split(" ");
    const excess = requested.filter((entry) => !granted.includes(entry));
    if (excess.length) throw new InvalidScopeError(`The requested scope exceeds the grant: ${excess.join(" ")}`);
    scope = formatScope(requested);
  }
  const grant = await activeGrant(stored.grantId);
  // Rotation is one transaction: spend the old token (atomically, exactly once) and store its successor.
  const next = randomSecret(32);
  const rotated = await db().$transaction(async (tx) => {
    const claimed = await tx.refreshToken.updateMany({ where: { tokenHash, rotatedAt: null, expiresAt: { gt: now } }, data: { rotatedAt: now } });
    if (claimed.count === 0) return false;
    await tx.refreshToken.create({
      data: { tokenHash: sha256Hex(next), grantId: grant.id, clientId, scope: stored.scope, createdAt: now, expiresAt: addSeconds(now, REFRESH_TOKEN_TTL_SECONDS) },
    });
    return true;
  });
  if (!rotated) {
    const again = await db().refreshToken.findUnique({ where: { tokenHash } });
    if (again?.rotatedAt) return replayDetected(clientId, "refresh_token", clock);
    throw new InvalidGrantError("The refresh token expired");
  }
  return issueTokens({ grant, scope, event: "token.refreshed", clock, refreshToken: next });
}

type ActiveGrant = { id: string; userId: string; clientId: string; scope: string };

async function activeGrant(grantId: string): Promise<ActiveGrant> {
  const grant = await db().grant.findUnique({ where: { id: grantId }, include: { client: { select: { status: true } } } });
  if (!grant || grant.status !== "active" || grant.client.status !== "active") throw new InvalidGrantError("The grant was revoked");
  return grant;
}

async function issueTokens(input: { grant: ActiveGrant; scope: string; event: "token.issued" | "token.refreshed"; clock: Clock; refreshToken?: string }): Promise<TokenResponse> {
  const { grant, scope, clock } = input;
  const now = clock();
  const accessToken = await signAccessToken({ sub: grant.userId, client_id: grant.clientId, scope, grant_id: grant.id }, clock);
  let refreshToken = input.refreshToken;
  if (!refreshToken && hasScope(grant.scope, "offline_access")) {
    refreshToken = randomSecret(32);
    await db().refreshToken.create({
      data: { tokenHash: sha256Hex(refreshToken), grantId: grant.id, clientId: grant.clientId, scope: grant.scope, createdAt: now, expiresAt: addSeconds(now, REFRESH_TOKEN_TTL_SECONDS) },
    });
  }
  await db().grant.update({ where: { id: grant.id }, data: { lastUsedAt: now } });
  await recordAudit(
    { type: input.event, userId: grant.userId, clientId: grant.clientId, data: { grant: grant.id, scope, withRefresh: Boolean(refreshToken) } },
    clock,
  );
  return {
    access_token: accessToken,
    token_type: "Bearer",
    expires_in: ACCESS_TOKEN_TTL_SECONDS,
    ...(refreshToken ? { refresh_token: refreshToken } : {}),
    scope,
  };
}

/** A spent code or refresh token came back: treat the client as compromised. */
async function replayDetected(clientId: string, credential: "authorization_code" | "refresh_token", clock: Clock): Promise<never> {
  await recordAudit({ type: "oauth.replay_detected", clientId, data: { presented: credential } }, clock);
  await revokeClient(clientId, "replay", clock);
  throw new InvalidGrantError(credential === "authorization_code" ? "The authorization code was already used" : "The refresh token was already used");
}
