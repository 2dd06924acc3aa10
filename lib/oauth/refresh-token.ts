import { db } from "@/lib/db";
import { changesOf, rowsOf, runTransaction, unanswered, type TransactionScript } from "@/lib/db/transaction-script";
import { randomSecret, sha256Hex } from "@/lib/crypto";
import { addSeconds, type Clock } from "@/lib/clock";
import { InvalidScopeError } from "./errors";
import { formatScope, parseScope } from "./scope";
import {
  activeGrantOf,
  checkPresented,
  grantUsed,
  presentedQuery,
  settleSpend,
  type ActiveGrant,
  type Lost,
  type Presented,
  type Replay,
} from "./single-use";

const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;

/** Stores a new refresh token (only its SHA-256), valid 30 days from `now`, and returns it. */
export function* mintRefreshToken(input: { grantId: string; clientId: string; scope: string; now: Date }): TransactionScript<string> {
  const token = randomSecret(32);
  const { grantId, clientId, scope, now } = input;
  yield* unanswered(
    `INSERT INTO "RefreshToken" ("tokenHash", "grantId", "clientId", "scope", "createdAt", "expiresAt") VALUES (?, ?, ?, ?, ?, ?)`,
    sha256Hex(token),
    grantId,
    clientId,
    scope,
    now,
    addSeconds(now, REFRESH_TOKEN_TTL_SECONDS),
  );
  return token;
}

const PRESENTED = presentedQuery("RefreshToken", "tokenHash", "rotatedAt");
const SPEND = `UPDATE "RefreshToken" SET "rotatedAt" = ? WHERE "tokenHash" = ? AND "rotatedAt" IS NULL AND "expiresAt" > ?`;

type Rotated = { grant: ActiveGrant; scope: string; refreshToken: string };

/**
 * Spends a refresh token and mints its successor, with the same scope, in one transaction that also marks the
 * grant used. `requestedScope` may narrow the access token's scope (not the successor's). Returns the grant, that
 * scope and the successor.
 */
export async function rotateRefreshToken(
  input: { clientId: string; token: string; requestedScope: string | null },
  clock: Clock,
): Promise<Rotated> {
  const { clientId } = input;
  const now = clock();
  const tokenHash = sha256Hex(input.token);
  const outcome = await runTransaction(function* (): TransactionScript<Rotated | Replay | Lost> {
    const [row] = yield* rowsOf<Presented>(PRESENTED, now, tokenHash);
    const stored = checkPresented(row, { credential: "refresh_token", clientId });
    if ("replayed" in stored) return stored;
    let scope = stored.scope;
    if (input.requestedScope !== null) {
      const requested = parseScope(input.requestedScope);
      const granted = stored.scope.split(" ");
      const excess = requested.filter((entry) => !granted.includes(entry));
      if (excess.length) throw new InvalidScopeError(`The requested scope exceeds the grant: ${excess.join(" ")}`);
      scope = formatScope(requested);
    }
    const grant = activeGrantOf(stored);
    // Spent atomically, exactly once: the successor exists only if this UPDATE changed the row.
    if (!(yield* changesOf(SPEND, now, tokenHash, now))) return { lost: stored };
    const refreshToken = yield* mintRefreshToken({ grantId: grant.id, clientId, scope: stored.scope, now });
    yield* grantUsed(grant.id, now);
    return { grant, scope, refreshToken };
  });
  return settleSpend(outcome, {
    credential: "refresh_token",
    isSpent: async () => Boolean((await db().refreshToken.findUnique({ where: { tokenHash } }))?.rotatedAt),
    clock,
  });
}
