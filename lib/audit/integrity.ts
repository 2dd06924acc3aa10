// What /audit says about the chain, at a cost that does not grow with the whole log: the events since the
// stored checkpoint are re-verified in full (then the checkpoint moves to the head), and each of the
// person's own events is checked against its hash and both its links. `npm run audit:verify` is the full check.
import { db } from "@/lib/db";
import { systemClock, type Clock } from "@/lib/clock";
import { eventHash, GENESIS_HASH, type ChainPoint } from "./chain";
import { verifyAuditChain } from "./index";
import { visibleTo } from "./query";

export type AuditIntegrity = { ok: true; ownEvents: number } | { ok: false; brokenAt: number; reason: string };

const CHECKPOINT_ID = 1;
const BATCH = 1000;

async function checkpoint(): Promise<ChainPoint> {
  const stored = await db().auditCheckpoint.findUnique({ where: { id: CHECKPOINT_ID } });
  return stored ? { seq: stored.seq, hash: stored.hash } : { seq: 0, hash: GENESIS_HASH };
}

/** Moves the checkpoint forward only: a slower concurrent view never sets it back. */
async function advanceCheckpoint(to: ChainPoint, clock: Clock): Promise<void> {
  const data = { seq: to.seq, hash: to.hash, verifiedAt: clock() };
  const { count } = await db().auditCheckpoint.updateMany({ where: { id: CHECKPOINT_ID, seq: { lt: to.seq } }, data });
  if (count === 0)
    await db()
      .auditCheckpoint.createMany({ data: [{ id: CHECKPOINT_ID, ...data }] })
      .catch(() => {});
}

/** Each event: its own hash, the hash of the event before it, and the link of the event after it. */
async function verifyOwnEvents(userId: string): Promise<AuditIntegrity> {
  const where = await visibleTo(userId);
  let ownEvents = 0;
  for (let after = 0; ;) {
    const rows = await db().auditEvent.findMany({ where: { AND: [where, { seq: { gt: after } }] }, orderBy: { seq: "asc" }, take: BATCH });
    if (rows.length === 0) return { ok: true, ownEvents };
    const neighbourSeqs = rows.flatMap((row) => [row.seq - 1, row.seq + 1]);
    const neighbours = new Map(
      (await db().auditEvent.findMany({ where: { seq: { in: neighbourSeqs } }, select: { seq: true, hash: true, prevHash: true } })).map(
        (row) => [row.seq, row],
      ),
    );
    for (const row of rows) {
      if (eventHash(row) !== row.hash) return { ok: false, brokenAt: row.seq, reason: `event ${row.seq} was altered` };
      const before = row.seq === 1 ? { hash: GENESIS_HASH } : neighbours.get(row.seq - 1);
      if (!before) return { ok: false, brokenAt: row.seq - 1, reason: `event ${row.seq - 1} is missing` };
      if (before.hash !== row.prevHash)
        return { ok: false, brokenAt: row.seq, reason: `event ${row.seq} does not chain to event ${row.seq - 1}` };
      const next = neighbours.get(row.seq + 1);
      if (next && next.prevHash !== row.hash)
        return { ok: false, brokenAt: row.seq + 1, reason: `event ${row.seq + 1} does not chain to event ${row.seq}` };
    }
    ownEvents += rows.length;
    after = rows[rows.length - 1].seq;
  }
}

/** The chain's state as one person may see it: broken anywhere since the checkpoint or in their events, or intact. */
export async function auditIntegrityFor(userId: string, clock: Clock = systemClock): Promise<AuditIntegrity> {
  const since = await checkpoint();
  if (since.seq > 0) {
    const anchor = await db().auditEvent.findUnique({ where: { seq: since.seq }, select: { hash: true } });
    if (anchor?.hash !== since.hash) return { ok: false, brokenAt: since.seq, reason: `event ${since.seq} changed after it was verified` };
  }
  const recent = await verifyAuditChain(since);
  if (!recent.ok) return { ok: false, brokenAt: recent.brokenAt, reason: recent.reason };
  const own = await verifyOwnEvents(userId);
  if (own.ok && recent.events > since.seq) await advanceCheckpoint({ seq: recent.events, hash: recent.head }, clock);
  return own;
}
