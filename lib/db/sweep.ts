// Rows that nothing can use any more are deleted, in bounded batches, so tables do not grow without bound
// and a sweep never holds a long lock. Each kind is kept a while past its expiry where that still serves:
// a spent code or refresh token presented again within that time is still recognised as a replay.
import { db } from "@/lib/db";
import { config } from "@/lib/config";
import { systemClock, type Clock } from "@/lib/clock";
import { runEvery } from "@/lib/runtime/every";
import { FINAL_STATUSES } from "@/contract";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** How long each kind of row is kept after it can no longer be used. */
export const RETENTION = {
  webauthnChallenge: HOUR,
  authorizationRequest: DAY,
  authorizationCode: DAY,
  refreshToken: DAY,
  /**
   * Decided requests stay listable by agents and people this long after they were created; so does the idempotency key
   * each was created with (a column of its own, lib/wallet/idempotency.ts): until then a retry with it is answered.
   */
  agentRequest: 90 * DAY,
  /** Rate-limit counters are useless once their window is over. */
  rateLimit: 0,
  /** A DPoP proof's jti, once its iat is out of the window: the proof is refused as stale from then on. */
  dpopProof: 0,
} as const;

/** Dynamically registered clients that never got a grant go this long after registration (UNUSED_CLIENT_RETENTION_HOURS). */
type Kind = keyof typeof RETENTION | "unusedClient";

export type SweepCounts = Record<Kind, number>;

type Options = { batchSize?: number; maxBatches?: number; clock?: Clock };

/** How one kind of row is found (a batch of keys of rows past `cutoff`) and deleted. */
type Swept = {
  find: (cutoff: Date, now: Date, take: number) => Promise<string[]>;
  remove: (keys: string[]) => Promise<{ count: number }>;
};

const keysOf =
  <Key extends string>(key: Key) =>
  (rows: Record<Key, string>[]) =>
    rows.map((row) => row[key]);

const SWEPT: Record<Kind, Swept> = {
  webauthnChallenge: {
    find: (cutoff, _now, take) =>
      db()
        .webAuthnChallenge.findMany({ where: { expiresAt: { lt: cutoff } }, select: { id: true }, take })
        .then(keysOf("id")),
    remove: (keys) => db().webAuthnChallenge.deleteMany({ where: { id: { in: keys } } }),
  },
  authorizationRequest: {
    find: (cutoff, _now, take) =>
      db()
        .authorizationRequest.findMany({ where: { expiresAt: { lt: cutoff } }, select: { id: true }, take })
        .then(keysOf("id")),
    remove: (keys) => db().authorizationRequest.deleteMany({ where: { id: { in: keys } } }),
  },
  authorizationCode: {
    find: (cutoff, _now, take) =>
      db()
        .authorizationCode.findMany({ where: { expiresAt: { lt: cutoff } }, select: { codeHash: true }, take })
        .then(keysOf("codeHash")),
    remove: (keys) => db().authorizationCode.deleteMany({ where: { codeHash: { in: keys } } }),
  },
  refreshToken: {
    find: (cutoff, _now, take) =>
      db()
        .refreshToken.findMany({ where: { expiresAt: { lt: cutoff } }, select: { tokenHash: true }, take })
        .then(keysOf("tokenHash")),
    remove: (keys) => db().refreshToken.deleteMany({ where: { tokenHash: { in: keys } } }),
  },
  // A pending request past its expiry is expired whether or not anyone looked at it since; a submitted one
  // still waits for its receipt and is kept.
  agentRequest: {
    find: (cutoff, now, take) =>
      db()
        .agentRequest.findMany({
          where: {
            createdAt: { lt: cutoff },
            OR: [{ status: { in: [...FINAL_STATUSES] } }, { status: "pending", expiresAt: { lt: now } }],
          },
          select: { id: true },
          take,
        })
        .then(keysOf("id")),
    remove: (keys) => db().agentRequest.deleteMany({ where: { id: { in: keys } } }),
  },
  rateLimit: {
    find: (cutoff, _now, take) =>
      db()
        .rateLimit.findMany({ where: { expire: { lt: cutoff } }, select: { key: true }, take })
        .then(keysOf("key")),
    remove: (keys) => db().rateLimit.deleteMany({ where: { key: { in: keys } } }),
  },
  dpopProof: {
    find: (cutoff, _now, take) =>
      db()
        .dpopProof.findMany({ where: { expiresAt: { lt: cutoff } }, select: { jtiHash: true }, take })
        .then(keysOf("jtiHash")),
    remove: (keys) => db().dpopProof.deleteMany({ where: { jtiHash: { in: keys } } }),
  },
  // Registered by RFC 7591 (not a metadata document's cache, not an API key) and never granted: nothing refers
  // to it but its audit event, which stays. Its consent requests expire on their own.
  unusedClient: {
    find: (cutoff, _now, take) =>
      db()
        .client.findMany({
          where: { kind: "oauth", documentFetchedAt: null, createdAt: { lt: cutoff }, grants: { none: {} } },
          select: { id: true },
          take,
        })
        .then(keysOf("id")),
    // Checked again at deletion: a grant approved since the find keeps its client.
    remove: (keys) => db().client.deleteMany({ where: { id: { in: keys }, grants: { none: {} } } }),
  },
};

/**
 * One sweep over every table with expiring rows, at most `maxBatches` batches of `batchSize` rows per table;
 * returns how many rows of each kind it deleted.
 */
export async function sweepExpired(options: Options = {}): Promise<SweepCounts> {
  const batchSize = options.batchSize ?? 500;
  const maxBatches = options.maxBatches ?? 20;
  const now = (options.clock ?? systemClock)();
  const counts = {} as SweepCounts;
  const retention: Record<Kind, number> = { ...RETENTION, unusedClient: config().unusedClientRetentionMs };
  for (const kind of Object.keys(SWEPT) as Kind[]) {
    const cutoff = new Date(now.getTime() - retention[kind]);
    counts[kind] = 0;
    for (let batch = 0; batch < maxBatches; batch++) {
      const keys = await SWEPT[kind].find(cutoff, now, batchSize);
      if (keys.length) counts[kind] += (await SWEPT[kind].remove(keys)).count;
      if (keys.length < batchSize) break;
    }
  }
  return counts;
}

const SWEEP_EVERY_MS = 10 * 60_000;

/** Sweeps a minute after start, then every ten minutes, in this server process (every instance may: deletes are idempotent). */
export function startSweeping(): void {
  runEvery("Sweeping expired rows", SWEEP_EVERY_MS, () => sweepExpired(), { firstAfterMs: 60_000 });
}
