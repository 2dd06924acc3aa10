// Leases that serialize work across instances through the database (SQLite or PostgreSQL): the holder of
// `allowance:<id>` is the only one spending from that allowance, so each spend is checked against the chain as the
// previous one left it; the holder of `relayer:<chain>:<address>` is the only one choosing that relayer's nonce.
// The holder renews its lease while its work runs, however long that is (a spend may wait minutes for the relayer's
// lease and a receipt); a crashed holder stops renewing, and once `until` has passed another instance takes it over.
// A holder that stalled that long has lost it: the transaction that records what it is about to send confirms the
// lease is still its own (LeaseHolding.confirmed), so it never sends on a lease another holds.
import { randomId } from "@/lib/crypto";
import { queryPastOrm, usesPostgres } from "@/lib/db";
import { AppError } from "@/lib/http/errors";
import { changesLater, required, requiring, unanswered, writing, type Query, type TransactionScript } from "@/lib/db/transaction-script";

class LeaseTimeoutError extends Error {
  constructor(key: string) {
    super(`waited too long for ${key.split(":")[0]} to be free`);
    this.name = "LeaseTimeoutError";
  }
}

/** The holder's lease lapsed and another holder took it before the work sent anything: nothing was sent. */
export class LeaseLostError extends AppError {
  constructor(key: string) {
    super(
      "lease_lost",
      `The ${key.split(":")[0]}'s lease lapsed before the transaction was sent and another instance took it over; nothing ` +
        "was sent. Try again.",
      503,
    );
  }
}

// Past the ORM (lib/db queryPastOrm): a payment takes and frees two leases, and through Prisma those four statements
// cost more CPU than the rest of its database work.
const TAKE = `INSERT INTO "Lease" ("key", "holder", "until") VALUES (?, ?, ?)
  ON CONFLICT ("key") DO UPDATE SET "holder" = excluded."holder", "until" = excluded."until" WHERE "Lease"."until" < ?
  RETURNING "holder"`;
const RENEW = `UPDATE "Lease" SET "until" = ? WHERE "key" = ? AND "holder" = ? RETURNING "key"`;
const FREE = `DELETE FROM "Lease" WHERE "key" = ? AND "holder" = ? RETURNING "key"`;
const FREE_IN_TRANSACTION = `DELETE FROM "Lease" WHERE "key" = ? AND "holder" = ?`;

/** How long a lease is held before its holder renews it (or, crashed, loses it). */
const HOLD_MS = 30_000;

/** Takes the lease when it is free or its holder's time has passed, in one statement. */
async function tryTake(key: string, holder: string, holdMs: number): Promise<boolean> {
  const now = new Date();
  const rows = await queryPastOrm<{ holder: string }>(TAKE, [key, holder, new Date(now.getTime() + holdMs), now]);
  return rows[0]?.holder === holder;
}

/** The lease is free: no one holds it, or its holder's time has passed. */
const FREE_NOW = `SELECT 1 AS "free" WHERE NOT EXISTS (SELECT 1 FROM "Lease" WHERE "key" = ? AND "until" >= ?)`;

/**
 * In the caller's transaction, in place of `withLease`: the lease `key` is free for as long as the transaction runs;
 * while another holds it, `busy()` refuses the transaction. On PostgreSQL the transaction takes it and gives it back
 * (the answer: the script that does, for the end of the caller's work), so that whoever asks for it meanwhile waits for
 * the commit, on the row the transaction wrote, and then sees what the transaction wrote. SQLite's transaction holds
 * the database's only write lock from its start, so no one can take the lease before it commits: a read suffices.
 */
export function* leaseInTransaction(key: string, busy: () => Error): TransactionScript<() => TransactionScript<void>> {
  const now = new Date();
  if (!usesPostgres()) {
    yield* required(busy, FREE_NOW, key, now);
    return function* () {};
  }
  const holder = randomId("ls_");
  yield* required(busy, TAKE, key, holder, new Date(now.getTime() + HOLD_MS), now);
  return () => unanswered(FREE_IN_TRANSACTION, key, holder);
}

/** A lease taken in a transaction (leaseTakenIn), for withLease's `taken`. */
export type HeldLease = { key: string; holder: string };

/** The lease under which one instance at a time chooses a relayer's next nonce on the chain, or replaces one it sent. */
export const relayerLease = (chainId: number, relayer: string) => `relayer:${chainId}:${relayer}`;

/** A lease asked for in a transaction: `held()`, once it has committed, is the lease, or null when another holds it. */
export type LeaseTaking = { asked: HeldLease; held: () => HeldLease | null };

/** Gives back, in the same transaction, the lease just taken unless the holder also took the lease `alongside`. */
const ONLY_ALONGSIDE = `DELETE FROM "Lease" WHERE "key" = ? AND "holder" = ?
  AND NOT EXISTS (SELECT 1 FROM "Lease" WHERE "key" = ? AND "holder" = ?)`;

/**
 * In the caller's transaction, without waiting for an answer: takes the lease `key` when it is free or its holder's
 * time has passed, and only `alongside` another lease taken earlier in the transaction when one is given (a holder of
 * the second never waits for the first: leases are waited for in one order). Once the transaction has committed, the
 * lease is held from then on (withLease's `taken`, or freeLease), or not taken. One rolled back takes nothing.
 */
export function* leaseTakenIn(key: string, alongside?: HeldLease): TransactionScript<LeaseTaking> {
  const asked = { key, holder: randomId("ls_") };
  const now = new Date();
  const taken = yield* changesLater(TAKE, key, asked.holder, new Date(now.getTime() + HOLD_MS), now);
  const givenBack = alongside ? yield* changesLater(ONLY_ALONGSIDE, key, asked.holder, alongside.key, alongside.holder) : () => 0;
  return { asked, held: () => (taken() > 0 && givenBack() === 0 ? asked : null) };
}

/** Frees leases taken in a transaction that no work will hold. */
export async function freeLease(...leases: HeldLease[]): Promise<void> {
  await Promise.all(leases.map((lease) => queryPastOrm(FREE, [lease.key, lease.holder])));
}

/** Each key's last queued turn in this process. */
const turns = new Map<string, Promise<unknown>>();

/**
 * Queues a turn at `key` in this process: `before` settles once every earlier caller's turn has ended, and the next
 * caller waits for `end()` (or for this caller's work to settle, whichever comes first).
 */
function turnAt(key: string): { before: Promise<unknown>; end: () => void } {
  const before = turns.get(key) ?? Promise.resolve();
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  const settled = Promise.allSettled([before, ended]);
  turns.set(key, settled);
  void settled.then(() => turns.get(key) === settled && turns.delete(key));
  return { before, end };
}

/**
 * What the work holding a lease may do with it: `release()` frees it in a transaction of the work's (with the writes
 * after which the next holder may start), and once that has committed `freed()` lets this process's next caller of the
 * key go while the work goes on (withLease then frees it no more). `confirmed()`, in the transaction that records
 * what the work is about to send: the lease is still this holder's, renewed from then, or the transaction is refused
 * with LeaseLostError.
 */
export type LeaseHolding = { release: () => Query; freed: () => void; confirmed: () => Query };

/**
 * Runs `work` while holding the lease `key`, waiting up to `waitMs` for it, or holding the one the caller `taken` in a
 * transaction of its own (leaseTakenIn). Callers in one process queue in memory, so at most one of them per instance
 * polls the database: a burst of waiters does not crowd out the holder's writes.
 */
export function withLease<T>(
  key: string,
  work: (lease: LeaseHolding) => Promise<T>,
  options: { holdMs?: number; waitMs?: number; taken?: HeldLease | null } = {},
): Promise<T> {
  const holdMs = options.holdMs ?? HOLD_MS;
  const deadline = Date.now() + (options.waitMs ?? 120_000);
  const turn = turnAt(key);
  // Held already: it runs at once, and this process's next callers queue behind it as behind any other holder.
  const running = options.taken
    ? holding(options.taken, work, holdMs, turn.end)
    : turn.before.then(async () => holding(await taken(key, holdMs, deadline), work, holdMs, turn.end));
  return running.finally(turn.end);
}

/**
 * Moves the lease's end `holdMs` on every third of it while the holder works; stop() ends the renewals. A renewal that
 * finds the lease no longer the holder's (it lapsed and was taken over, or the work freed it) ends them: renewing
 * cannot win it back, and the holder's next confirmation is refused.
 */
function renewing(key: string, holder: string, holdMs: number) {
  const timer = setInterval(() => {
    void queryPastOrm(RENEW, [new Date(Date.now() + holdMs), key, holder]).then(
      (rows) => {
        if (!rows.length) clearInterval(timer);
      },
      (error: unknown) => console.error(`Renewing the lease ${key.split(":")[0]} failed: ${(error as Error).name}`),
    );
  }, holdMs / 3);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** The lease `key`, once it is free or its holder's time has passed (polled until `deadline`). */
async function taken(key: string, holdMs: number, deadline: number): Promise<HeldLease> {
  const holder = randomId("ls_");
  for (let attempt = 0; !(await tryTake(key, holder, holdMs)); attempt++) {
    if (Date.now() > deadline) throw new LeaseTimeoutError(key);
    // jittered, growing to 50 ms: waiters do not poll in step
    await new Promise((resolve) => setTimeout(resolve, Math.min(5 + attempt * 5, 50) * (0.5 + Math.random())));
  }
  return { key, holder };
}

async function holding<T>(lease: HeldLease, work: (lease: LeaseHolding) => Promise<T>, holdMs: number, passOn: () => void): Promise<T> {
  const renewals = renewing(lease.key, lease.holder, holdMs);
  let released = false;
  let returned = false;
  try {
    const value = await work({
      release: () => {
        released = true;
        return writing(FREE_IN_TRANSACTION, lease.key, lease.holder);
      },
      freed: () => {
        renewals.stop();
        passOn();
      },
      confirmed: () => requiring(() => new LeaseLostError(lease.key), RENEW, new Date(Date.now() + holdMs), lease.key, lease.holder),
    });
    returned = true;
    return value;
  } finally {
    renewals.stop();
    if (!(released && returned)) await freeLease(lease);
  }
}
