import { db } from "@/lib/db";
import { unanswered, type TransactionScript } from "@/lib/db/transaction-script";
import { recordAuditIn, type AuditInput } from "@/lib/audit";
import type { Clock } from "@/lib/clock";
import { cancellationEvents, cancelPendingIn } from "@/lib/wallet/request-lifecycle";
import { disableInBackground, stopAllowancesIn } from "@/lib/allowances/stop";
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
 * A presented code or refresh token as the token endpoint reads it, in one query with its grant and that grant's
 * client (presentedQuery): whether it is spent or expired at the time asked, and the grant's standing.
 */
export type Presented = {
  clientId: string;
  grantId: string;
  scope: string;
  /** 1 when spent (used or rotated), 1 when expired: numbers, as both databases return a CASE */
  spent: number;
  expired: number;
  userId: string | null;
  grantClientId: string | null;
  grantScope: string | null;
  grantStatus: string | null;
  clientStatus: string | null;
};

/**
 * The SELECT of a presented credential from `table` by its hash, with `columns` of its own beside Presented's; its
 * parameters are the time it may not have expired by, then the hash.
 */
export function presentedQuery(table: string, hashColumn: string, spentColumn: string, columns: string[] = []): string {
  return `SELECT ${[...columns, "clientId", "grantId", "scope"].map((column) => `t."${column}"`).join(", ")},
      CASE WHEN t."${spentColumn}" IS NULL THEN 0 ELSE 1 END AS "spent",
      CASE WHEN t."expiresAt" > ? THEN 0 ELSE 1 END AS "expired",
      g."userId", g."clientId" AS "grantClientId", g."scope" AS "grantScope", g."status" AS "grantStatus",
      c."status" AS "clientStatus"
    FROM "${table}" t LEFT JOIN "Grant" g ON g."id" = t."grantId" LEFT JOIN "Client" c ON c."id" = g."clientId"
    WHERE t."${hashColumn}" = ?`;
}

/** A spent credential came back: the caller commits what it read, then calls replayDetected. */
export type Replay = { replayed: Presented };

/**
 * The checks every presented code or refresh token passes before anything else: it is known, unspent
 * (a spent one coming back is a replay), the presenting client's, and unexpired.
 */
export function checkPresented<Stored extends Presented>(
  stored: Stored | undefined,
  input: { credential: SingleUseCredential; clientId: string },
): Stored | Replay {
  const rejected = REJECTED(input.credential);
  if (!stored) throw new InvalidGrantError(rejected.invalid);
  if (stored.spent) return { replayed: stored };
  if (stored.clientId !== input.clientId) throw new InvalidGrantError(rejected.otherClient);
  if (stored.expired) throw new InvalidGrantError(rejected.expired);
  return stored;
}

export type ActiveGrant = { id: string; userId: string; clientId: string; scope: string };

/** The grant a presented code or refresh token stands for, if it and its client are still active. */
export function activeGrantOf(presented: Presented): ActiveGrant {
  const { grantId: id, userId, grantClientId: clientId, grantScope: scope } = presented;
  if (presented.grantStatus !== "active" || presented.clientStatus !== "active" || !userId || !clientId || scope === null)
    throw new InvalidGrantError("The grant was revoked");
  return { id, userId, clientId, scope };
}

/** The grant a device code stands for, if it and its client are still active. */
export async function activeGrant(grantId: string): Promise<ActiveGrant> {
  const grant = await db().grant.findUnique({ where: { id: grantId }, include: { client: { select: { status: true } } } });
  if (!grant || grant.status !== "active" || grant.client.status !== "active") throw new InvalidGrantError("The grant was revoked");
  return grant;
}

/** "Last used" on the Clients screen: a token issued for the grant, in the transaction that issues it. */
export function* grantUsed(grantId: string, now: Date): TransactionScript<void> {
  yield* unanswered(`UPDATE "Grant" SET "lastUsedAt" = ? WHERE "id" = ?`, now, grantId);
}

/** Another exchange spent the credential between the read and the conditional UPDATE (PostgreSQL's READ COMMITTED). */
export type Lost = { lost: Presented };

/**
 * What the token endpoint answers once the transaction that spends a credential has committed: its result; a
 * replay's revocation; or, when the conditional UPDATE changed no row (of any number of concurrent callers, one
 * wins), a re-read: spent means the credential was presented twice, otherwise it expired meanwhile.
 */
export async function settleSpend<T extends object>(
  outcome: T | Replay | Lost,
  input: { credential: SingleUseCredential; isSpent: () => Promise<boolean>; clock: Clock },
): Promise<T> {
  if ("replayed" in outcome) return replayDetected(outcome.replayed, input.credential, input.clock);
  if ("lost" in outcome) {
    if (await input.isSpent()) return replayDetected(outcome.lost, input.credential, input.clock);
    throw new InvalidGrantError(REJECTED(input.credential).expired);
  }
  return outcome;
}

const CANCELLED_AFTER_REPLAY = "The client's access was revoked after a replay";

/** The client a code or refresh token was issued to, and the grant (its token family) it stands for. */
type Issued = { clientId: string; grantId: string };

/** Replays being answered in this process, by what was replayed (credential, grant, client): they share one revocation. */
const revocations = new Map<string, Promise<void>>();

/**
 * A spent code or refresh token came back: what it stands for is compromised, and the replay is refused. Replays of
 * one family that arrive together (a stolen token tried in parallel) wait for one revocation and its one event
 * rather than queueing a transaction each behind the audit log's lock, which under load outlasted the time a
 * transaction may wait for a connection.
 */
async function replayDetected(issued: Issued, credential: SingleUseCredential, clock: Clock): Promise<never> {
  const family = `${credential} ${issued.grantId} ${issued.clientId}`;
  let revocation = revocations.get(family);
  if (!revocation) {
    revocation = revokeAfterReplay(issued, credential, clock).finally(() => revocations.delete(family));
    revocations.set(family, revocation);
  }
  await revocation;
  throw new InvalidGrantError(REJECTED(credential).used);
}

/**
 * A registered client's id is its own, so the client is revoked with every grant made to it (the seed's rule). A URL
 * client_id (a client metadata document) is shared by everyone who uses that app, so only the replayed token's
 * family is revoked: its grant, the replayer's own (docs/decisions/0014). The events and the revocation commit
 * together or not at all.
 */
async function revokeAfterReplay(issued: Issued, credential: SingleUseCredential, clock: Clock): Promise<void> {
  const { clientId, grantId } = issued;
  const sharedClient = isClientIdUrl(clientId);
  const now = clock();
  const stopped = await db().$transaction(async (tx) => {
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
    await recordAuditIn(tx, [...events, ...cancellationEvents(cancelled, CANCELLED_AFTER_REPLAY), ...stopped.events], clock);
    return stopped;
  });
  disableInBackground(stopped);
}
