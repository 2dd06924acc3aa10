import { db } from "@/lib/db";
import { recordAudit } from "@/lib/audit";
import { systemClock, type Clock } from "@/lib/clock";
import { ACCESS_TOKEN_TTL_SECONDS, signAccessToken } from "./access-token";
import { claimAuthorizationCode } from "./authorization-code";
import { InvalidClientError, InvalidRequestError, UnsupportedGrantTypeError } from "./errors";
import { mintRefreshToken, rotateRefreshToken } from "./refresh-token";
import { checkResource } from "./resource";
import { hasScope } from "./scope";
import type { ActiveGrant } from "./single-use";

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
  // Checked before the code or refresh token is looked at: a refused request spends nothing.
  checkResource(form.getAll("resource"));
  return grantType === "authorization_code" ? exchangeCode(client.id, form, clock) : refresh(client.id, form, clock);
}

async function exchangeCode(clientId: string, form: URLSearchParams, clock: Clock): Promise<TokenResponse> {
  const code = param(form, "code")!;
  const redirectUri = param(form, "redirect_uri")!;
  // A malformed verifier is a failed PKCE check (invalid_grant, the code spent as failed), not a syntax error:
  // whoever holds the code must not learn anything more than with a wrong verifier.
  const verifier = param(form, "code_verifier")!;
  const { grant, scope } = await claimAuthorizationCode({ clientId, code, redirectUri, verifier }, clock);
  return issueTokens({ grant, scope, event: "token.issued", clock });
}

async function refresh(clientId: string, form: URLSearchParams, clock: Clock): Promise<TokenResponse> {
  const token = param(form, "refresh_token")!;
  const requestedScope = param(form, "scope", false);
  const { grant, scope, refreshToken } = await rotateRefreshToken({ clientId, token, requestedScope }, clock);
  return issueTokens({ grant, scope, event: "token.refreshed", clock, refreshToken });
}

/**
 * Signs the access token and answers. A code exchange brings no refresh token: the grant's first one
 * is minted here if the grant holds offline_access; a refresh brings the rotated successor.
 */
async function issueTokens(input: {
  grant: ActiveGrant;
  scope: string;
  event: "token.issued" | "token.refreshed";
  clock: Clock;
  refreshToken?: string;
}): Promise<TokenResponse> {
  const { grant, scope, clock } = input;
  const now = clock();
  const accessToken = await signAccessToken({ sub: grant.userId, client_id: grant.clientId, scope, grant_id: grant.id }, clock);
  let refreshToken = input.refreshToken;
  if (!refreshToken && hasScope(grant.scope, "offline_access")) {
    refreshToken = await mintRefreshToken(db(), { grantId: grant.id, clientId: grant.clientId, scope: grant.scope, now });
  }
  await db().grant.update({ where: { id: grant.id }, data: { lastUsedAt: now } });
  await recordAudit(
    {
      type: input.event,
      userId: grant.userId,
      clientId: grant.clientId,
      data: { grant: grant.id, scope, withRefresh: Boolean(refreshToken) },
    },
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
