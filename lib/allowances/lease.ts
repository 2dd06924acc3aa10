// Leases that serialize work across instances through the database (SQLite or PostgreSQL): the holder of
// `allowance:<id>` is the only one spending from that allowance, so each spend is checked against the chain as the
// previous one left it; the holder of `relayer:<chain>:<address>` is the only one choosing that relayer's nonce.
// The holder renews its lease while its work runs, however long that is (a spend may wait minutes for the relayer's
// lease and a receipt); a crashed holder stops renewing, and once `until` has passed another instance takes it over.
import { randomId } from "@/lib/crypto";
import { queryPastOrm } from "@/lib/db";
import { required, unanswered, type TransactionScript } from "@/lib/db/transaction-script";

class LeaseTimeoutError extends Error {
  constructor(key: string) {
    super(`waited too long for ${key.split(":")[0]} to be free`);
    this.name = "LeaseTimeoutError";
  }
}

// Past the ORM (lib/db queryPastOrm): a payment takes and frees two leases, and through Prisma those four statements
// cost more CPU than the rest of its database work.
const TAKE = `INSERT INTO "Lease" ("key", "holder", "until") VALUES (?, ?, ?)
  ON CONFLICT ("key") DO UPDATE SET "holder" = excluded."holder", "until" = excluded."until" WHERE "Lease"."until" < ?
  RETURNING "holder"`;
const RENEW = `UPDATE "Lease" SET "until" = ? WHERE "key" = ? AND "holder" = ? RETURNING "key"`;
const FREE = `DELETE FROM "Lease" WHERE "key" = ? AND "holder" = ? RETURNING "key"`;

/** How long a lease is held before its holder renews it (or, crashed, loses it). */
const HOLD_MS = 30_000;

/** Takes the lease when it is free or its holder's time has passed, in one statement. */
async function tryTake(key: string, holder: string, holdMs: number): Promise<boolean> {
  const now = new Date();
  const rows = await queryPastOrm<{ holder: string }>(TAKE, [key, holder, new Date(now.getTime() + holdMs), now]);
  return rows[0]?.holder === holder;
}

/**
 * In the caller's transaction, in place of `withLease`: the lease `key` is free, and the transaction takes it and gives
 * it back. Whoever asks for it meanwhile waits for the commit (on the row the transaction wrote), and then sees what the
 * transaction wrote; while another holds it, `busy()` refuses the transaction. Answers the script that gives it back,
 * for the end of the caller's work.
 */
export function* leaseInTransaction(key: string, busy: () => Error): TransactionScript<() => TransactionScript<void>> {
  const holder = randomId("ls_");
  const now = new Date();
  yield* required(busy, TAKE, key, holder, new Date(now.getTime() + HOLD_MS), now);
  return () => unanswered(`DELETE FROM "Lease" WHERE "key" = ? AND "holder" = ?`, key, holder);
}

/** Each key's last queued turn in this process. */
const turns = new Map<string, Promise<unknown>>();

/** Runs `work` after every earlier caller of `key` in this process has finished. */
function inTurn<T>(key: string, work: () => Promise<T>): Promise<T> {
  const run = (turns.get(key) ?? Promise.resolve()).catch(() => {}).then(work);
  const settled = run.catch(() => {});
  turns.set(key, settled);
  void settled.then(() => turns.get(key) === settled && turns.delete(key));
  return run;
}

/**
 * Runs `work` while holding the lease `key`, waiting up to `waitMs` for it. Callers in one process queue in memory,
 * so at most one of them per instance polls the database: a burst of waiters does not crowd out the holder's writes.
 */
export function withLease<T>(key: string, work: () => Promise<T>, options: { holdMs?: number; waitMs?: number } = {}): Promise<T> {
  const deadline = Date.now() + (options.waitMs ?? 120_000);
  return inTurn(key, () => holdLease(key, work, options.holdMs ?? HOLD_MS, deadline));
}

/** Moves the lease's end `holdMs` on every third of it while the holder works; stop() ends the renewals. */
function renewing(key: string, holder: string, holdMs: number) {
  const timer = setInterval(() => {
    void queryPastOrm(RENEW, [new Date(Date.now() + holdMs), key, holder]).catch((error: unknown) =>
      console.error(`Renewing the lease ${key.split(":")[0]} failed: ${(error as Error).name}`),
    );
  }, holdMs / 3);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

async function holdLease<T>(key: string, work: () => Promise<T>, holdMs: number, deadline: number): Promise<T> {
  const holder = randomId("ls_");
  for (let attempt = 0; !(await tryTake(key, holder, holdMs)); attempt++) {
    if (Date.now() > deadline) throw new LeaseTimeoutError(key);
    // jittered, growing to 50 ms: waiters do not poll in step
    await new Promise((resolve) => setTimeout(resolve, Math.min(5 + attempt * 5, 50) * (0.5 + Math.random())));
  }
  const renewals = renewing(key, holder, holdMs);
  try {
    return await work();
  } finally {
    renewals.stop();
    await queryPastOrm(FREE, [key, holder]);
  }
}
