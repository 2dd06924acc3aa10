import { runTransaction } from "@/lib/db/transaction-script";
import { recordAudit } from "@/lib/audit";
import { systemClock, type Clock } from "@/lib/clock";
import { config } from "@/lib/config";
import { ACCESS_TOKEN_TTL_SECONDS, signAccessToken } from "./access-token";
import { claimAuthorizationCode } from "./authorization-code";
import { claimDeviceCode } from "./device-authorization";
import { checkDpopProof, singleProof } from "./dpop-proof";
import { spendDpopProof } from "./dpop-replay";
import { UnsupportedGrantTypeError } from "./errors";
import { authenticateClient, formParam } from "./form";
import { mintRefreshToken, rotateRefreshToken } from "./refresh-token";
import { DEVICE_CODE_GRANT_TYPE } from "./registration";
import { checkResource } from "./resource";
import { hasScope } from "./scope";
import { grantUsed, type ActiveGrant } from "./single-use";

export type TokenResponse = {
  access_token: string;
  /** DPoP when the request carried a proof (RFC 9449 §5), the seed's Bearer otherwise */
  token_type: "Bearer" | "DPoP";
  expires_in: number;
  refresh_token?: string;
  scope: string;
};

/** The exchange's request: the client, its form, and the thumbprint of the DPoP key it proved (null: a bearer client). */
type Exchanged = { clientId: string; form: URLSearchParams; jkt: string | null };
type Exchange = (request: Exchanged, clock: Clock) => Promise<TokenResponse>;

/** The grants the token endpoint answers: the seed's two, and RFC 8628's device code (docs/decisions/0017). */
const EXCHANGES: Record<string, Exchange> = {
  authorization_code: exchangeCode,
  refresh_token: refresh,
  [DEVICE_CODE_GRANT_TYPE]: exchangeDeviceCode,
};

/** POST /oauth/token, from a parsed form body and the request's `DPoP` header, if any. */
export async function exchangeToken(form: URLSearchParams, dpop: string | null, clock: Clock = systemClock): Promise<TokenResponse> {
  const grantType = formParam(form, "grant_type")!;
  const exchange = Object.hasOwn(EXCHANGES, grantType) ? EXCHANGES[grantType] : undefined;
  if (!exchange) throw new UnsupportedGrantTypeError(grantType, Object.keys(EXCHANGES));
  const clientId = await authenticateClient(form, clock);
  // Checked before the code or refresh token is looked at: a refused request spends nothing.
  checkResource(form.getAll("resource"));
  return exchange({ clientId, form, jkt: await provenKey(dpop, clock) }, clock);
}

/**
 * The thumbprint of the key a DPoP proof at this endpoint shows (RFC 9449 §5), its jti spent before any code or
 * refresh token is: a replayed proof spends nothing else. Null without a proof: a bearer client, as before.
 */
async function provenKey(dpop: string | null, clock: Clock): Promise<string | null> {
  const proof = singleProof(dpop);
  if (proof === null) return null;
  const checked = await checkDpopProof(proof, { htm: "POST", htu: `${config().baseUrl}/oauth/token` }, clock);
  await spendDpopProof(checked);
  return checked.jkt;
}

async function exchangeDeviceCode({ clientId, form, jkt }: Exchanged, clock: Clock): Promise<TokenResponse> {
  const { grant, scope } = await claimDeviceCode(clientId, form, clock);
  const now = clock();
  // The grant's first refresh token, if it holds offline_access, as a code exchange mints it.
  const refreshToken = await runTransaction(function* () {
    yield* grantUsed(grant.id, now);
    if (!hasScope(grant.scope, "offline_access")) return undefined;
    return yield* mintRefreshToken({ grantId: grant.id, clientId: grant.clientId, scope: grant.scope, now, jkt });
  });
  return issueTokens({ grant, scope, event: "token.issued", clock, refreshToken, jkt });
}

async function exchangeCode({ clientId, form, jkt }: Exchanged, clock: Clock): Promise<TokenResponse> {
  const code = formParam(form, "code")!;
  const redirectUri = formParam(form, "redirect_uri")!;
  // A malformed verifier is a failed PKCE check (invalid_grant, the code spent as failed), not a syntax error:
  // whoever holds the code must not learn anything more than with a wrong verifier.
  const verifier = formParam(form, "code_verifier")!;
  const { grant, scope, refreshToken } = await claimAuthorizationCode({ clientId, code, redirectUri, verifier, jkt }, clock);
  return issueTokens({ grant, scope, event: "token.issued", clock, refreshToken, jkt });
}

async function refresh({ clientId, form, jkt }: Exchanged, clock: Clock): Promise<TokenResponse> {
  const token = formParam(form, "refresh_token")!;
  const requestedScope = formParam(form, "scope", false);
  const { grant, scope, refreshToken } = await rotateRefreshToken({ clientId, token, requestedScope, jkt }, clock);
  return issueTokens({ grant, scope, event: "token.refreshed", clock, refreshToken, jkt });
}

/**
 * Signs the access token, records the event and answers, once the exchange has committed the refresh token (the
 * grant's first, when it holds offline_access, or a rotated successor) and marked the grant used.
 */
async function issueTokens(input: {
  grant: ActiveGrant;
  scope: string;
  event: "token.issued" | "token.refreshed";
  clock: Clock;
  refreshToken?: string;
  /** the DPoP key the access token is bound to (its `cnf.jkt`), or null for a bearer token */
  jkt: string | null;
}): Promise<TokenResponse> {
  const { grant, scope, clock, refreshToken, jkt } = input;
  const claims = { sub: grant.userId, client_id: grant.clientId, scope, grant_id: grant.id, ...(jkt ? { jkt } : {}) };
  const accessToken = signAccessToken(claims, clock);
  await recordAudit(
    {
      type: input.event,
      userId: grant.userId,
      clientId: grant.clientId,
      data: { grant: grant.id, scope, withRefresh: Boolean(refreshToken), ...(jkt ? { dpop: true } : {}) },
    },
    clock,
  );
  return {
    access_token: accessToken,
    token_type: jkt ? "DPoP" : "Bearer",
    expires_in: ACCESS_TOKEN_TTL_SECONDS,
    ...(refreshToken ? { refresh_token: refreshToken } : {}),
    scope,
  };
}
