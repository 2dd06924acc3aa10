import { db } from "@/lib/db";
import { sha256Hex } from "@/lib/crypto";
import { systemClock, type Clock } from "@/lib/clock";
import { verifyAccessToken } from "./access-token";
import { InvalidTokenError } from "./errors";
import { hasScope } from "./scope";
import type { ApprovalMode } from "./grants";

export const API_KEY_PREFIX = "svc_live_";

/** Who is calling /mcp and with what authority: exactly one grant. */
export type AgentContext = {
  userId: string;
  clientId: string;
  clientName: string;
  grantId: string;
  via: "access_token" | "api_key";
  credentials: { credentialId: string; mode: ApprovalMode }[];
};

const grantSelect = {
  id: true,
  userId: true,
  clientId: true,
  status: true,
  scope: true,
  lastUsedAt: true,
  client: { select: { status: true, name: true } },
  credentials: { select: { credentialId: true, mode: true } },
} as const;

/**
 * Resolves an Authorization header to the caller's grant. The token alone is
 * never enough: the grant and the client must still be active right now.
 */
export async function resolveBearer(header: string | null, clock: Clock = systemClock): Promise<AgentContext> {
  if (!header) throw new InvalidTokenError("An Authorization: Bearer header is required", false);
  const match = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i.exec(header.trim());
  if (!match) throw new InvalidTokenError("The Authorization header must be: Bearer <token>");
  const token = match[1];
  return token.startsWith(API_KEY_PREFIX) ? resolveApiKey(token, clock) : resolveAccessToken(token, clock);
}

async function resolveAccessToken(token: string, clock: Clock): Promise<AgentContext> {
  const claims = await verifyAccessToken(token, clock);
  if (!hasScope(claims.scope, "mcp")) throw new InvalidTokenError("The access token lacks the mcp scope");
  const grant = await db().grant.findUnique({ where: { id: claims.grant_id }, select: grantSelect });
  if (!grant || grant.clientId !== claims.client_id || grant.userId !== claims.sub) throw new InvalidTokenError("The access token's grant does not exist");
  return contextOf(grant, "access_token", clock);
}

/**
 * A personal API key is looked up by its SHA-256: the database compares
 * digests, so the lookup's timing says nothing about the key itself.
 */
async function resolveApiKey(key: string, clock: Clock): Promise<AgentContext> {
  const grant = await db().grant.findFirst({ where: { client: { keyHash: sha256Hex(key), kind: "api_key" } }, select: grantSelect });
  if (!grant) throw new InvalidTokenError("The API key is invalid");
  return contextOf(grant, "api_key", clock);
}

/** "Last used" on the Clients screen, written at most once a minute per grant to keep the hot path read-only. */
const LAST_USED_RESOLUTION_MS = 60_000;

function touch(grant: { id: string; lastUsedAt: Date | null }, clock: Clock): void {
  const now = clock();
  if (grant.lastUsedAt && now.getTime() - grant.lastUsedAt.getTime() < LAST_USED_RESOLUTION_MS) return;
  void db()
    .grant.updateMany({ where: { id: grant.id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: new Date(now.getTime() - LAST_USED_RESOLUTION_MS) } }] }, data: { lastUsedAt: now } })
    .catch(() => {});
}

function contextOf(
  grant: { id: string; userId: string; clientId: string; status: string; lastUsedAt: Date | null; client: { status: string; name: string }; credentials: { credentialId: string; mode: string }[] },
  via: AgentContext["via"],
  clock: Clock,
): AgentContext {
  if (grant.client.status !== "active") throw new InvalidTokenError("The client was revoked");
  if (grant.status !== "active") throw new InvalidTokenError("The grant was revoked");
  touch(grant, clock);
  return {
    userId: grant.userId,
    clientId: grant.clientId,
    clientName: grant.client.name,
    grantId: grant.id,
    via,
    credentials: grant.credentials.map((entry) => ({ credentialId: entry.credentialId, mode: entry.mode as ApprovalMode })),
  };
}
