import { db } from "@/lib/db";
import { changesOf, rowsOf, runTransaction, unanswered, type TransactionScript } from "@/lib/db/transaction-script";
import { randomSecret, sha256Hex } from "@/lib/crypto";
import { addSeconds, type Clock } from "@/lib/clock";
import { InvalidDpopProofError, InvalidScopeError } from "./errors";
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

/**
 * Stores a new refresh token (only its SHA-256), valid 30 days from `now`, and returns it; bound to the DPoP key
 * `jkt` when the client proved one (RFC 9449 §5: clients here are public).
 */
export function* mintRefreshToken(input: {
  grantId: string;
  clientId: string;
  scope: string;
  now: Date;
  jkt: string | null;
}): TransactionScript<string> {
  const token = randomSecret(32);
  const { grantId, clientId, scope, now, jkt } = input;
  yield* unanswered(
    `INSERT INTO "RefreshToken" ("tokenHash", "grantId", "clientId", "scope", "createdAt", "expiresAt", "jkt")
      VALUES (?, ?, ?, ?, ?, ?, ?)`,
    sha256Hex(token),
    grantId,
    clientId,
    scope,
    now,
    addSeconds(now, REFRESH_TOKEN_TTL_SECONDS),
    jkt,
  );
  return token;
}

const PRESENTED = presentedQuery("RefreshToken", "tokenHash", "rotatedAt", ["jkt"]);
const SPEND = `UPDATE "RefreshToken" SET "rotatedAt" = ? WHERE "tokenHash" = ? AND "rotatedAt" IS NULL AND "expiresAt" > ?`;

type Rotated = { grant: ActiveGrant; scope: string; refreshToken: string };

/**
 * Spends a refresh token and mints its successor, with the same scope, in one transaction that also marks the
 * grant used. `requestedScope` may narrow the access token's scope (not the successor's). A token bound to a DPoP
 * key is spent only with a proof of that key (`jkt`), and its successor is bound to it too. Returns the grant, that
 * scope and the successor.
 */
export async function rotateRefreshToken(
  input: { clientId: string; token: string; requestedScope: string | null; jkt: string | null },
  clock: Clock,
): Promise<Rotated> {
  const { clientId } = input;
  const now = clock();
  const tokenHash = sha256Hex(input.token);
  const outcome = await runTransaction(function* (): TransactionScript<Rotated | Replay | Lost> {
    const [row] = yield* rowsOf<Presented & { jkt: string | null }>(PRESENTED, now, tokenHash);
    const stored = checkPresented(row, { credential: "refresh_token", clientId });
    if ("replayed" in stored) return stored;
    // Refused before anything is spent: without the key the token stays as it was, for its holder.
    if (stored.jkt !== null && stored.jkt !== input.jkt)
      throw new InvalidDpopProofError("The refresh token is bound to a DPoP key: present a DPoP proof signed with that key");
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
    const refreshToken = yield* mintRefreshToken({ grantId: grant.id, clientId, scope: stored.scope, now, jkt: input.jkt });
    yield* grantUsed(grant.id, now);
    return { grant, scope, refreshToken };
  });
  return settleSpend(outcome, {
    credential: "refresh_token",
    isSpent: async () => Boolean((await db().refreshToken.findUnique({ where: { tokenHash } }))?.rotatedAt),
    clock,
  });
}
