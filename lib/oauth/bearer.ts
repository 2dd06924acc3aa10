import { db, selectRows } from "@/lib/db";
import { PreparedSelect, storedTime } from "@/lib/db/prepared";
import { sha256Hex } from "@/lib/crypto";
import { systemClock, type Clock } from "@/lib/clock";
import { config } from "@/lib/config";
import { verifyAccessToken } from "./access-token";
import { checkDpopProof, singleProof } from "./dpop-proof";
import { spendDpopProof } from "./dpop-replay";
import { InsufficientScopeError, InvalidDpopProofError, InvalidTokenError } from "./errors";
import { hasScope } from "./scope";
import { API_KEY_PREFIX, type ApprovalMode, type CredentialKind } from "@/contract";
import { MAX_AUTHORIZATION_HEADER } from "@/lib/http/input-limits";
import type { AgentContext } from "@/lib/wallet/agent-context";

/** A grant with what every /mcp call checks: its client's status and its (credential, mode) pairs. */
type BearerGrant = {
  id: string;
  userId: string;
  clientId: string;
  status: string;
  lastUsedAt: Date | null;
  userEmail: string;
  client: { status: string; name: string };
  credentials: AgentContext["credentials"];
};

type BearerRow = {
  id: string;
  userId: string;
  clientId: string;
  status: string;
  lastUsedAt: Date | string | number | null;
  userEmail: string;
  clientStatus: string;
  clientName: string;
  credentialId: string | null;
  mode: string | null;
  credentialName: string | null;
  credentialKind: string | null;
  address: string | null;
};

const SELECT_GRANT = `
    SELECT g."id", g."userId", g."clientId", g."status", g."lastUsedAt", u."email" AS "userEmail",
           c."status" AS "clientStatus", c."name" AS "clientName", gc."credentialId", gc."mode",
           cr."name" AS "credentialName", cr."kind" AS "credentialKind", cr."address"
    FROM "Grant" g
    JOIN "Client" c ON c."id" = g."clientId"
    JOIN "User" u ON u."id" = g."userId"
    LEFT JOIN "GrantCredential" gc ON gc."grantId" = g."id"
    LEFT JOIN "Credential" cr ON cr."id" = gc."credentialId" AND cr."userId" = g."userId"`;
const ORDER_CREDENTIALS = `ORDER BY cr."createdAt", cr."id"`;

/**
 * The grant, its client, its person's email and its credentials in one query: this runs on every /mcp call, and one plain
 * join costs a fraction of the ORM's relation loading (separate queries per relation). A credential
 * counts only while it belongs to the grant's person.
 */
const GRANT_BY_ID = new PreparedSelect<BearerRow>("bearer_grant_by_id", `${SELECT_GRANT} WHERE g."id" = ? ${ORDER_CREDENTIALS}`);
const GRANT_BY_API_KEY = new PreparedSelect<BearerRow>(
  "bearer_grant_by_api_key",
  `${SELECT_GRANT} WHERE c."keyHash" = ? AND c."kind" = 'api_key' ${ORDER_CREDENTIALS}`,
);

async function loadGrant(statement: PreparedSelect<BearerRow>, key: string): Promise<BearerGrant | null> {
  const rows = await selectRows(statement, key);
  if (rows.length === 0) return null;
  const [first] = rows;
  return {
    id: first.id,
    userId: first.userId,
    clientId: first.clientId,
    status: first.status,
    // SQLite hands raw DateTime columns back as numbers or text, PostgreSQL as Dates in the process's time zone.
    lastUsedAt:
      first.lastUsedAt === null ? null : typeof first.lastUsedAt === "number" ? new Date(first.lastUsedAt) : storedTime(first.lastUsedAt),
    userEmail: first.userEmail,
    client: { status: first.clientStatus, name: first.clientName },
    credentials: rows.flatMap((row) =>
      row.credentialId && row.mode && row.credentialName && row.credentialKind && row.address
        ? [
            {
              credentialId: row.credentialId,
              mode: row.mode as ApprovalMode,
              name: row.credentialName,
              kind: row.credentialKind as CredentialKind,
              address: row.address,
            },
          ]
        : [],
    ),
  };
}

/** The request's `DPoP` header and method, for a token sent with the DPoP scheme (its htu is /mcp's own URL). */
export type PresentedProof = { proof: string | null; method: string };

/**
 * Resolves an Authorization header to the caller's grant. The token alone is
 * never enough: the grant and the client must still be active right now. A token
 * bound to a DPoP key (RFC 9449 §7) comes with the DPoP scheme and a proof of that key.
 */
export async function resolveBearer(
  header: string | null,
  dpop: PresentedProof = { proof: null, method: "POST" },
  clock: Clock = systemClock,
): Promise<AgentContext> {
  if (!header) throw new InvalidTokenError("An Authorization: Bearer header is required", false);
  if (header.length > MAX_AUTHORIZATION_HEADER)
    throw new InvalidTokenError(`The Authorization header may be at most ${MAX_AUTHORIZATION_HEADER} characters`);
  const match = /^(Bearer|DPoP) ([A-Za-z0-9\-._~+/]+=*)$/i.exec(header.trim());
  if (!match) throw new InvalidTokenError("The Authorization header must be: Bearer <token>");
  const [, scheme, token] = match;
  if (scheme.toLowerCase() === "dpop") return resolveDpopToken(token, dpop, clock);
  return token.startsWith(API_KEY_PREFIX) ? resolveApiKey(token, clock) : resolveAccessToken(token, clock);
}

async function resolveAccessToken(token: string, clock: Clock): Promise<AgentContext> {
  const claims = await verifyAccessToken(token, clock);
  // RFC 9449 §7.1: as a bearer, a bound token is worth nothing to whoever copied it.
  if (claims.jkt)
    throw new InvalidTokenError("The access token is bound to a DPoP key: send it as Authorization: DPoP with a proof", true, "DPoP");
  return grantOf(claims, clock);
}

/**
 * A token sent with the DPoP scheme: bound (a personal API key never is), with one proof for this request (`htm`,
 * `htu` /mcp, `ath` of the token) signed by the key it is bound to, whose jti is spent before the grant is read. Its
 * refusals are challenged with the DPoP scheme, which is the one the client answers.
 */
async function resolveDpopToken(token: string, dpop: PresentedProof, clock: Clock): Promise<AgentContext> {
  try {
    if (token.startsWith(API_KEY_PREFIX)) throw new InvalidTokenError("A personal API key goes with the Bearer scheme");
    const claims = await verifyAccessToken(token, clock);
    if (!claims.jkt) throw new InvalidTokenError("The access token is not DPoP-bound: send it as Authorization: Bearer");
    const proof = singleProof(dpop.proof, 401);
    if (proof === null) throw new InvalidDpopProofError("A DPoP-bound access token needs a DPoP proof header", 401);
    const checked = await checkDpopProof(proof, { htm: dpop.method, htu: config().mcpResource, accessToken: token, status: 401 }, clock);
    if (checked.jkt !== claims.jkt)
      throw new InvalidDpopProofError("The DPoP proof is signed by another key than the token is bound to", 401);
    await spendDpopProof(checked, 401);
    return await grantOf(claims, clock);
  } catch (error) {
    if (error instanceof InvalidTokenError && error.scheme === "Bearer") throw new InvalidTokenError(error.message, true, "DPoP");
    throw error;
  }
}

async function grantOf(claims: Awaited<ReturnType<typeof verifyAccessToken>>, clock: Clock): Promise<AgentContext> {
  if (!hasScope(claims.scope, "mcp")) throw new InsufficientScopeError("mcp");
  const grant = await loadGrant(GRANT_BY_ID, claims.grant_id);
  if (!grant || grant.clientId !== claims.client_id || grant.userId !== claims.sub)
    throw new InvalidTokenError("The access token's grant does not exist");
  return contextOf(grant, "access_token", clock);
}

/**
 * A personal API key is looked up by its SHA-256: the database compares
 * digests, so the lookup's timing says nothing about the key itself.
 */
async function resolveApiKey(key: string, clock: Clock): Promise<AgentContext> {
  const grant = await loadGrant(GRANT_BY_API_KEY, sha256Hex(key));
  if (!grant) throw new InvalidTokenError("The API key is invalid");
  return contextOf(grant, "api_key", clock);
}

/** "Last used" on the Clients screen, written at most once a minute per grant to keep the hot path read-only. */
const LAST_USED_RESOLUTION_MS = 60_000;

function touch(grant: { id: string; lastUsedAt: Date | null }, clock: Clock): void {
  const now = clock();
  if (grant.lastUsedAt && now.getTime() - grant.lastUsedAt.getTime() < LAST_USED_RESOLUTION_MS) return;
  void db()
    .grant.updateMany({
      where: { id: grant.id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: new Date(now.getTime() - LAST_USED_RESOLUTION_MS) } }] },
      data: { lastUsedAt: now },
    })
    .catch(() => {});
}

function contextOf(grant: BearerGrant, via: AgentContext["via"], clock: Clock): AgentContext {
  if (grant.client.status !== "active") throw new InvalidTokenError("The client was revoked");
  if (grant.status !== "active") throw new InvalidTokenError("The grant was revoked");
  touch(grant, clock);
  return {
    userId: grant.userId,
    userEmail: grant.userEmail,
    clientId: grant.clientId,
    clientName: grant.client.name,
    grantId: grant.id,
    via,
    credentials: grant.credentials,
  };
}
