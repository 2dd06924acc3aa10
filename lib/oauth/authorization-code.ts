import { db, type Tx } from "@/lib/db";
import { randomSecret, safeEqual, sha256Hex } from "@/lib/crypto";
import { addSeconds, type Clock } from "@/lib/clock";
import { InvalidGrantError } from "./errors";
import { verifyPkce } from "./pkce";
import { activeGrant, checkPresented, spendOnce, type ActiveGrant } from "./single-use";

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

/**
 * The token endpoint's side of a code: checks it against the presenting client, its redirect URI and
 * PKCE verifier, and spends it. Returns the grant and the scope the code was issued for.
 */
export async function claimAuthorizationCode(
  input: { clientId: string; code: string; redirectUri: string; verifier: string },
  clock: Clock,
): Promise<{ grant: ActiveGrant; scope: string }> {
  const { clientId } = input;
  const now = clock();
  const codeHash = sha256Hex(input.code);
  const stored = await checkPresented(await db().authorizationCode.findUnique({ where: { codeHash } }), {
    credential: "authorization_code",
    clientId,
    isSpent: (code) => code.usedAt !== null,
    clock,
  });
  if (!safeEqual(stored.redirectUri, input.redirectUri))
    throw new InvalidGrantError("redirect_uri does not match the authorization request");
  if (!verifyPkce(input.verifier, stored.codeChallenge)) {
    // A wrong verifier may be a thief holding the code: make it unusable (expired), not used.
    await db().authorizationCode.updateMany({ where: { codeHash, usedAt: null }, data: { expiresAt: now } });
    throw new InvalidGrantError("PKCE verification failed");
  }
  // Checked before the claim: once the code is claimed, concurrent replays of it revoke the
  // client (or the grant), and that must not turn the one winning exchange into an error.
  const grant = await activeGrant(stored.grantId);
  const scope = await spendOnce({
    credential: "authorization_code",
    issued: stored,
    spend: async () => {
      const { count } = await db().authorizationCode.updateMany({
        where: { codeHash, usedAt: null, expiresAt: { gt: now } },
        data: { usedAt: now },
      });
      return count ? stored.scope : null;
    },
    isSpent: async () => Boolean((await db().authorizationCode.findUnique({ where: { codeHash } }))?.usedAt),
    clock,
  });
  return { grant, scope };
}
