import { db, type Tx } from "@/lib/db";
import { systemClock, type Clock } from "@/lib/clock";
import { canonicalJson, jsonValue } from "@/lib/crypto";
import { onShutdown } from "@/lib/runtime/shutdown";
import type { TransactionScript } from "@/lib/db/transaction-script";
import { appendChained, appendedIn, lockAuditLogIn, type EventRow } from "./append";
import { eventHash, GENESIS_HASH, type ChainPoint, type StoredEvent } from "./chain";

/** Every kind of event the log records (docs/product.md §6). */
export const AUDIT_EVENT_TYPES = [
  "user.signed_up",
  "user.signed_in",
  "passkey.added",
  "passkey.renamed",
  "passkey.removed",
  "credential.connected",
  "credential.renamed",
  "credential.resealed",
  "credential.export_requested",
  "credential.removed",
  "client.registered",
  "grant.approved",
  "grant.denied",
  "grant.revoked",
  "token.revoked",
  "token.issued",
  "token.refreshed",
  "oauth.replay_detected",
  "client.revoked",
  "api_key.issued",
  "api_key.revoked",
  "mcp.tool_called",
  "policy.refused",
  "policy.changed",
  "address_book.saved",
  "address_book.removed",
  "request.transition",
  "step_up.refused",
  "session.ended_everywhere",
  "allowance.created",
  "allowance.spent",
  "allowance.stopped",
  "allowance.suspended",
  "allowance.resumed",
  "allowance.revoked",
  "agent_account.returned",
  "allowance.sliced",
] as const;
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

export type AuditInput = {
  type: AuditEventType;
  userId?: string | null;
  clientId?: string | null;
  credentialId?: string | null;
  requestId?: string | null;
  data?: Record<string, unknown>;
};

/** Keys whose values never belong in the log, whoever passes them. */
const SECRET_KEY = /token|secret|password|verifier|private|ciphertext|prf|assertion|^code$|^key$/i;

function redact(input: unknown): unknown {
  const value = jsonValue(input);
  if (Array.isArray(value)) return value.map(redact);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([key, inner]) => [key, SECRET_KEY.test(key) ? "[redacted]" : redact(inner)]),
    );
  }
  return value;
}

/** An event waiting in this process's queue for the next append; `urgent` when its recorder awaits the commit. */
type Queued = { event: Omit<StoredEvent, "seq" | "prevHash">; urgent: boolean; settle: (error?: unknown) => void };

const queue: Queued[] = [];
/** How many queued events are urgent. */
let urgentQueued = 0;
let appending: Promise<void> | null = null;
/** At most this many events go into one append transaction. */
const MAX_BATCH = 200;
/**
 * How long an event recorded with recordAuditSoon may wait for others to share its transaction. An append costs
 * a transaction whatever its size: at hundreds of read calls a second this turns one transaction per call into
 * one per tens of calls (docs/performance.md).
 */
const SOON_MS = 50;
let soon: NodeJS.Timeout | null = null;

/** The events as rows after `head` (null: the log is empty), each hashed with the one before. */
function chained(head: ChainPoint | null, events: Queued["event"][]): EventRow[] {
  let seq = head?.seq ?? 0;
  let prevHash = head?.hash ?? GENESIS_HASH;
  return events.map((event) => {
    const stored: StoredEvent = { ...event, seq: ++seq, prevHash };
    prevHash = eventHash(stored);
    return { ...stored, hash: prevHash };
  });
}

/**
 * Appends the queued events in order, in one transaction, chained to the current head. Appends are serialized —
 * one batch at a time in this process, and a lock across processes and instances (lib/audit/append.ts) — so the
 * chain can never fork.
 */
async function appendBatch(batch: Queued[]): Promise<void> {
  const events = batch.map(({ event }) => event);
  await appendChained((head) => chained(head, events));
}

/** Appends batches while an urgent event or a full batch waits; what is left waits for the timer. */
async function drain(): Promise<void> {
  do {
    const batch = queue.splice(0, MAX_BATCH);
    urgentQueued -= batch.filter((queued) => queued.urgent).length;
    try {
      await appendBatch(batch);
      for (const queued of batch) queued.settle();
    } catch (error) {
      for (const queued of batch) queued.settle(error);
    }
  } while (urgentQueued > 0 || queue.length >= MAX_BATCH);
  appending = null;
  wake();
}

/** Starts an append when one is due, or the timer for events that can wait. */
function wake(): void {
  if (appending || !queue.length) return;
  if (urgentQueued > 0 || queue.length >= MAX_BATCH) {
    if (soon) clearTimeout(soon);
    soon = null;
    // After this turn's I/O callbacks: the events of every call they finish share the transaction. On SQLite an append
    // runs synchronously, so without the wait each urgent event would take a transaction of its own.
    appending = new Promise<void>((resolve) => setImmediate(resolve)).then(drain);
  } else {
    soon ??= setTimeout(() => {
      soon = null;
      appending ??= drain();
    }, SOON_MS).unref();
  }
}

function enqueue(input: AuditInput, clock: Clock, urgent: boolean, settle: Queued["settle"]): void {
  queue.push({ event: queuedEvent(input, clock), urgent, settle });
  if (urgent) urgentQueued++;
  wake();
}

/**
 * Appends one event, and resolves once it is committed. Events recorded while an append is running wait
 * for the next one and are committed together (group commit): under load, one transaction and one lock
 * acquisition serve many tool calls, and the chain keeps the order in which events were recorded.
 */
export async function recordAudit(input: AuditInput, clock: Clock = systemClock): Promise<void> {
  return new Promise((resolve, reject) => enqueue(input, clock, true, (error) => (error === undefined ? resolve() : reject(error))));
}

/**
 * The audit event of the call that asked for some work (an MCP tool call), handed to the work so that it records the
 * event with its own (recordAudit in the same turn): they share one append, and the call waits for one commit. Called
 * at most once, with the request the work made.
 */
export type CallEvent = (requestId: string) => AuditInput;

/**
 * Appends one event within SOON_MS, with whatever else is recorded meanwhile, and does not wait for it: for calls
 * that change nothing (read tools), whose answer need not wait for the log. A failed append is logged. An urgent
 * event takes the waiting ones along with it, in order; the server commits them before it stops (flushAudit).
 */
export function recordAuditSoon(input: AuditInput, clock: Clock = systemClock): void {
  enqueue(input, clock, false, (error) => error && console.error(`audit append failed: ${(error as Error).message}`));
}

/**
 * Appends events in the caller's transaction, so that they commit or roll back with the change they record: a
 * replay's event and the revocation it causes are never one without the other. It holds the log's write lock
 * until that transaction ends; every other event goes through recordAudit, which shares a transaction with others.
 */
export async function recordAuditIn(tx: Tx, inputs: AuditInput[], clock: Clock = systemClock): Promise<void> {
  await lockAuditLogIn(tx);
  const head = await tx.auditEvent.findFirst({ orderBy: { seq: "desc" }, select: { seq: true, hash: true } });
  const events = inputs.map((input) => queuedEvent(input, clock));
  await tx.auditEvent.createMany({ data: chained(head, events) });
}

/**
 * Appends events in the caller's transaction script, so that one commit serves the change and the events that record
 * it (a payment and its tool call). Once that transaction has committed, the answer resolves when they are appended:
 * at once, or, where the script could not append them (PostgreSQL, when another append moved the log's head since
 * this process last saw it), by an append of their own.
 */
export function* auditedIn(inputs: AuditInput[], clock: Clock = systemClock): TransactionScript<() => Promise<void>> {
  const events = inputs.map((input) => queuedEvent(input, clock));
  const appended = yield* appendedIn((head) => chained(head, events));
  return async () => {
    if (!appended()) await appendChained((head) => chained(head, events));
  };
}

/** Commits every queued event now: the server is stopping. */
async function flushAudit(): Promise<void> {
  while (queue.length || appending) {
    if (soon) clearTimeout(soon);
    soon = null;
    appending ??= drain();
    await appending;
  }
}
onShutdown(flushAudit);

function queuedEvent(input: AuditInput, clock: Clock): Queued["event"] {
  return {
    at: clock(),
    type: input.type,
    userId: input.userId ?? null,
    clientId: input.clientId ?? null,
    credentialId: input.credentialId ?? null,
    requestId: input.requestId ?? null,
    data: canonicalJson(redact(input.data ?? {})),
  };
}

export type ChainVerification =
  { ok: true; events: number; head: string } | { ok: false; events: number; brokenAt: number; reason: string };

/**
 * Recomputes the chain from `start` (by default the genesis: the whole chain) to the head: an edited,
 * inserted or deleted row breaks it.
 */
export async function verifyAuditChain(start: ChainPoint = { seq: 0, hash: GENESIS_HASH }): Promise<ChainVerification> {
  let prevHash = start.hash;
  let expectedSeq = start.seq + 1;
  const pageSize = 1000;
  for (;;) {
    const rows = await db().auditEvent.findMany({ where: { seq: { gte: expectedSeq } }, orderBy: { seq: "asc" }, take: pageSize });
    for (const row of rows) {
      if (row.seq !== expectedSeq)
        return { ok: false, events: expectedSeq - 1, brokenAt: expectedSeq, reason: `event ${expectedSeq} is missing` };
      if (row.prevHash !== prevHash)
        return { ok: false, events: expectedSeq - 1, brokenAt: row.seq, reason: `event ${row.seq} does not chain to event ${row.seq - 1}` };
      if (eventHash(row) !== row.hash)
        return { ok: false, events: expectedSeq - 1, brokenAt: row.seq, reason: `event ${row.seq} was altered` };
      prevHash = row.hash;
      expectedSeq++;
    }
    if (rows.length < pageSize) return { ok: true, events: expectedSeq - 1, head: prevHash };
  }
}
