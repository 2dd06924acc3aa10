import { db, type Tx } from "@/lib/db";
import { changesOf, rowsOf, runTransaction, unanswered, type TransactionScript } from "@/lib/db/transaction-script";
import { randomSecret, safeEqual, sha256Hex } from "@/lib/crypto";
import { addSeconds, type Clock } from "@/lib/clock";
import { InvalidGrantError } from "./errors";
import { verifyPkce } from "./pkce";
import { hasScope } from "./scope";
import { mintRefreshToken } from "./refresh-token";
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

const AUTHORIZATION_CODE_TTL_SECONDS = 5 * 60;

/** Stores a single-use code for an approved request (only its SHA-256) and returns the code. */
export async function mintAuthorizationCode(
  tx: Tx,
  input: { grantId: string; clientId: string; redirectUri: string; codeChallenge: string; scope: string; now: Date },
): Promise<string> {
  const code = randomSecret(32);
  const { grantId, clientId, redirectUri, codeChallenge, scope, now } = input;
  await tx.authorizationCode.create({
    data: {
      codeHash: sha256Hex(code),
      grantId,
      clientId,
      redirectUri,
      codeChallenge,
      scope,
      createdAt: now,
      expiresAt: addSeconds(now, AUTHORIZATION_CODE_TTL_SECONDS),
    },
  });
  return code;
}

const PRESENTED = presentedQuery("AuthorizationCode", "codeHash", "usedAt", ["redirectUri", "codeChallenge"]);
const SPEND = `UPDATE "AuthorizationCode" SET "usedAt" = ? WHERE "codeHash" = ? AND "usedAt" IS NULL AND "expiresAt" > ?`;
/** A wrong verifier may be a thief holding the code: it is made unusable (expired), not used. */
const DISABLE = `UPDATE "AuthorizationCode" SET "expiresAt" = ? WHERE "codeHash" = ? AND "usedAt" IS NULL`;

type Claimed = { grant: ActiveGrant; scope: string; refreshToken?: string };

/**
 * The token endpoint's side of a code: checks it against the presenting client, its redirect URI and PKCE
 * verifier, and spends it, in one transaction that also mints the grant's first refresh token (when the grant
 * holds offline_access) and marks the grant used. Returns the grant, the scope the code was issued for and that
 * refresh token.
 */
export async function claimAuthorizationCode(
  input: { clientId: string; code: string; redirectUri: string; verifier: string; jkt: string | null },
  clock: Clock,
): Promise<Claimed> {
  const { clientId } = input;
  const now = clock();
  const codeHash = sha256Hex(input.code);
  const outcome = await runTransaction(function* (): TransactionScript<Claimed | Replay | Lost | { refused: InvalidGrantError }> {
    const [row] = yield* rowsOf<Presented & { redirectUri: string; codeChallenge: string }>(PRESENTED, now, codeHash);
    const stored = checkPresented(row, { credential: "authorization_code", clientId });
    if ("replayed" in stored) return stored;
    if (!safeEqual(stored.redirectUri, input.redirectUri))
      throw new InvalidGrantError("redirect_uri does not match the authorization request");
    if (!verifyPkce(input.verifier, stored.codeChallenge)) {
      yield* unanswered(DISABLE, now, codeHash);
      return { refused: new InvalidGrantError("PKCE verification failed") };
    }
    // Checked before the claim: once the code is claimed, concurrent replays of it revoke the
    // client (or the grant), and that must not turn the one winning exchange into an error.
    const grant = activeGrantOf(stored);
    if (!(yield* changesOf(SPEND, now, codeHash, now))) return { lost: stored };
    const refreshToken = hasScope(grant.scope, "offline_access")
      ? yield* mintRefreshToken({ grantId: grant.id, clientId: grant.clientId, scope: grant.scope, now, jkt: input.jkt })
      : undefined;
    yield* grantUsed(grant.id, now);
    return { grant, scope: stored.scope, refreshToken };
  });
  if ("refused" in outcome) throw outcome.refused;
  return settleSpend(outcome, {
    credential: "authorization_code",
    isSpent: async () => Boolean((await db().authorizationCode.findUnique({ where: { codeHash } }))?.usedAt),
    clock,
  });
}
