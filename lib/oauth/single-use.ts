import { db } from "@/lib/db";
import { recordAudit } from "@/lib/audit";
import type { Clock } from "@/lib/clock";
import { revokeClient } from "./clients";
import { InvalidGrantError } from "./errors";

/** The secrets a client spends exactly once at the token endpoint, each standing for one grant. */
type SingleUseCredential = "authorization_code" | "refresh_token";

const NAMES: Record<SingleUseCredential, string> = { authorization_code: "authorization code", refresh_token: "refresh token" };

const REJECTED = (credential: SingleUseCredential) => {
  const name = NAMES[credential];
  return {
    invalid: `The ${name} is invalid`,
    used: `The ${name} was already used`,
    otherClient: `The ${name} was issued to another client`,
    expired: `The ${name} expired`,
  };
};

/**
 * The checks every presented code or refresh token passes before anything else: it is known, unspent
 * (a spent one coming back is a replay), the presenting client's, and unexpired.
 */
export async function checkPresented<Stored extends { clientId: string; expiresAt: Date }>(
  stored: Stored | null,
  input: { credential: SingleUseCredential; clientId: string; isSpent: (stored: Stored) => boolean; clock: Clock },
): Promise<Stored> {
  const rejected = REJECTED(input.credential);
  if (!stored) throw new InvalidGrantError(rejected.invalid);
  if (input.isSpent(stored)) return replayDetected(stored.clientId, input.credential, input.clock);
  if (stored.clientId !== input.clientId) throw new InvalidGrantError(rejected.otherClient);
  if (stored.expiresAt <= input.clock()) throw new InvalidGrantError(rejected.expired);
  return stored;
}

export type ActiveGrant = { id: string; userId: string; clientId: string; scope: string };

/** The grant a code or refresh token stands for, if it and its client are still active. */
export async function activeGrant(grantId: string): Promise<ActiveGrant> {
  const grant = await db().grant.findUnique({ where: { id: grantId }, include: { client: { select: { status: true } } } });
  if (!grant || grant.status !== "active" || grant.client.status !== "active") throw new InvalidGrantError("The grant was revoked");
  return grant;
}

/**
 * Spends a code or refresh token exactly once. `spend` runs the one conditional UPDATE (where unspent and
 * unexpired) and returns null if it changed no row: of any number of concurrent callers, one wins.
 * A loser re-reads the row: spent means the credential was presented twice, otherwise it expired meanwhile.
 */
export async function spendOnce<T>(input: {
  credential: SingleUseCredential;
  clientId: string;
  spend: () => Promise<T | null>;
  isSpent: () => Promise<boolean>;
  clock: Clock;
}): Promise<T> {
  const won = await input.spend();
  if (won !== null) return won;
  if (await input.isSpent()) return replayDetected(input.clientId, input.credential, input.clock);
  throw new InvalidGrantError(REJECTED(input.credential).expired);
}

/** A spent code or refresh token came back: treat the client as compromised. */
async function replayDetected(clientId: string, credential: SingleUseCredential, clock: Clock): Promise<never> {
  await recordAudit({ type: "oauth.replay_detected", clientId, data: { presented: credential } }, clock);
  await revokeClient(clientId, "replay", clock);
  throw new InvalidGrantError(REJECTED(credential).used);
}
