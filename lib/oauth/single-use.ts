import { db } from "@/lib/db";
import { recordAuditIn, type AuditInput } from "@/lib/audit";
import type { Clock } from "@/lib/clock";
import { cancellationEvents, cancelPendingIn } from "@/lib/wallet/request-lifecycle";
import { stopAllowancesIn } from "@/lib/allowances/stop";
import { isClientIdUrl } from "./client-metadata-document";
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
export async function checkPresented<Stored extends { clientId: string; grantId: string; expiresAt: Date }>(
  stored: Stored | null,
  input: { credential: SingleUseCredential; clientId: string; isSpent: (stored: Stored) => boolean; clock: Clock },
): Promise<Stored> {
  const rejected = REJECTED(input.credential);
  if (!stored) throw new InvalidGrantError(rejected.invalid);
  if (input.isSpent(stored)) return replayDetected(stored, input.credential, input.clock);
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
  /** what the credential was issued for */
  issued: Issued;
  spend: () => Promise<T | null>;
  isSpent: () => Promise<boolean>;
  clock: Clock;
}): Promise<T> {
  const won = await input.spend();
  if (won !== null) return won;
  if (await input.isSpent()) return replayDetected(input.issued, input.credential, input.clock);
  throw new InvalidGrantError(REJECTED(input.credential).expired);
}

const CANCELLED_AFTER_REPLAY = "The client's access was revoked after a replay";

/** The client a code or refresh token was issued to, and the grant (its token family) it stands for. */
type Issued = { clientId: string; grantId: string };

/**
 * A spent code or refresh token came back: what it stands for is compromised. A registered client's id is its
 * own, so the client is revoked with every grant made to it (the seed's rule). A URL client_id (a client metadata
 * document) is shared by everyone who uses that app, so only the replayed token's family is revoked: its grant,
 * the replayer's own (docs/decisions/0014). The events and the revocation commit together or not at all.
 */
async function replayDetected(issued: Issued, credential: SingleUseCredential, clock: Clock): Promise<never> {
  const { clientId, grantId } = issued;
  const sharedClient = isClientIdUrl(clientId);
  const now = clock();
  await db().$transaction(async (tx) => {
    const grant = await tx.grant.findUnique({ where: { id: grantId }, select: { userId: true } });
    const userId = grant?.userId ?? null;
    const events: AuditInput[] = [{ type: "oauth.replay_detected", userId, clientId, data: { presented: credential, grant: grantId } }];
    const revoked = { status: "revoked", revokedAt: now };
    if (sharedClient) {
      const { count } = await tx.grant.updateMany({ where: { id: grantId, status: "active" }, data: revoked });
      if (count) events.push({ type: "grant.revoked", userId, clientId, data: { grant: grantId, reason: "replay" } });
    } else {
      const { count } = await tx.client.updateMany({
        where: { id: clientId, status: "active" },
        data: { ...revoked, revokedWhy: "replay" },
      });
      await tx.grant.updateMany({ where: { clientId, status: "active" }, data: revoked });
      if (count) events.push({ type: "client.revoked", clientId, data: { reason: "replay" } });
    }
    // Their pending requests end with them, each a transition with its own event.
    const ended = sharedClient ? { grantId } : { clientId };
    const cancelled = await cancelPendingIn(tx, ended, CANCELLED_AFTER_REPLAY, now);
    const stopped = await stopAllowancesIn(tx, ended, "its client's token was replayed");
    await recordAuditIn(tx, [...events, ...cancellationEvents(cancelled, CANCELLED_AFTER_REPLAY), ...stopped], clock);
  });
  throw new InvalidGrantError(REJECTED(credential).used);
}
