import { db, type Tx } from "@/lib/db";
import { randomSecret, sha256Hex } from "@/lib/crypto";
import { addSeconds, type Clock } from "@/lib/clock";
import { InvalidScopeError } from "./errors";
import { formatScope, parseScope } from "./scope";
import { activeGrant, checkPresented, spendOnce, type ActiveGrant } from "./single-use";

const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;

/** Stores a new refresh token (only its SHA-256), valid 30 days from `now`, and returns it. */
export async function mintRefreshToken(tx: Tx, input: { grantId: string; clientId: string; scope: string; now: Date }): Promise<string> {
  const token = randomSecret(32);
  const { grantId, clientId, scope, now } = input;
  await tx.refreshToken.create({
    data: { tokenHash: sha256Hex(token), grantId, clientId, scope, createdAt: now, expiresAt: addSeconds(now, REFRESH_TOKEN_TTL_SECONDS) },
  });
  return token;
}

/**
 * Spends a refresh token and mints its successor, with the same scope. `requestedScope` may narrow the
 * access token's scope (not the successor's). Returns the grant, that scope and the successor.
 */
export async function rotateRefreshToken(
  input: { clientId: string; token: string; requestedScope: string | null },
  clock: Clock,
): Promise<{ grant: ActiveGrant; scope: string; refreshToken: string }> {
  const { clientId } = input;
  const now = clock();
  const tokenHash = sha256Hex(input.token);
  const stored = await checkPresented(await db().refreshToken.findUnique({ where: { tokenHash } }), {
    credential: "refresh_token",
    clientId,
    isSpent: (token) => token.rotatedAt !== null,
    clock,
  });
  let scope = stored.scope;
  if (input.requestedScope !== null) {
    const requested = parseScope(input.requestedScope);
    const granted = stored.scope.split(" ");
    const excess = requested.filter((entry) => !granted.includes(entry));
    if (excess.length) throw new InvalidScopeError(`The requested scope exceeds the grant: ${excess.join(" ")}`);
    scope = formatScope(requested);
  }
  const grant = await activeGrant(stored.grantId);
  // Rotation is one transaction: spend the old token (atomically, exactly once) and store its successor.
  const refreshToken = await spendOnce({
    credential: "refresh_token",
    issued: stored,
    spend: () =>
      db().$transaction(async (tx) => {
        const { count } = await tx.refreshToken.updateMany({
          where: { tokenHash, rotatedAt: null, expiresAt: { gt: now } },
          data: { rotatedAt: now },
        });
        return count ? mintRefreshToken(tx, { grantId: grant.id, clientId, scope: stored.scope, now }) : null;
      }),
    isSpent: async () => Boolean((await db().refreshToken.findUnique({ where: { tokenHash } }))?.rotatedAt),
    clock,
  });
  return { grant, scope, refreshToken };
}
