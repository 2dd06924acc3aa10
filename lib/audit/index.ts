import { createHash } from "node:crypto";
import { db, usesPostgres } from "@/lib/db";
import { systemClock, type Clock } from "@/lib/clock";

/** Every kind of event the log records (DESIGN.md §6). */
export const AUDIT_EVENT_TYPES = [
  "user.signed_up",
  "user.signed_in",
  "passkey.added",
  "passkey.renamed",
  "passkey.removed",
  "credential.connected",
  "credential.renamed",
  "credential.resealed",
  "credential.removed",
  "client.registered",
  "grant.approved",
  "grant.denied",
  "grant.revoked",
  "token.issued",
  "token.refreshed",
  "oauth.replay_detected",
  "client.revoked",
  "api_key.issued",
  "api_key.revoked",
  "mcp.tool_called",
  "request.transition",
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

export const GENESIS_HASH = "0".repeat(64);

/** Keys whose values never belong in the log, whoever passes them. */
const SECRET_KEY = /token|secret|password|verifier|private|ciphertext|prf|assertion|^code$|^key$/i;

/** What JSON.stringify would encode for a value with toJSON (a Date: its ISO string). */
function jsonValue(value: unknown): unknown {
  const toJSON = value && typeof value === "object" ? (value as { toJSON?: unknown }).toJSON : undefined;
  return typeof toJSON === "function" ? (toJSON as () => unknown).call(value) : value;
}

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

/** JSON with object keys sorted at every level: one encoding per value. */
export function canonicalJson(input: unknown): string {
  const value = jsonValue(input);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, inner]) => inner !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${canonicalJson(inner)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

/** An audit row as stored, before its own hash is computed. */
export type StoredEvent = {
  seq: number;
  at: Date;
  type: string;
  userId: string | null;
  clientId: string | null;
  credentialId: string | null;
  requestId: string | null;
  data: string;
  prevHash: string;
};

/** hash = SHA-256(prevHash ‖ canonical encoding of the event's fields). */
export function eventHash(event: StoredEvent): string {
  const body = canonicalJson({
    seq: event.seq,
    at: event.at.toISOString(),
    type: event.type,
    userId: event.userId,
    clientId: event.clientId,
    credentialId: event.credentialId,
    requestId: event.requestId,
    data: event.data,
  });
  return createHash("sha256").update(event.prevHash).update("\n").update(body).digest("hex");
}

function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: string }).code === "P2002";
}

/** Any constant: the advisory lock that serializes appends across PostgreSQL sessions. */
const AUDIT_LOCK = 7_100_423;

/**
 * Appends one event. Appends are serialized — one transaction at a time in
 * this process (SQLite), an advisory lock across instances (PostgreSQL) — and
 * seq, the primary key, is the previous one + 1, so the chain can never fork:
 * an append that still races (another process on the same SQLite file) gets a
 * unique violation and chains again to the new head.
 */
export async function recordAudit(input: AuditInput, clock: Clock = systemClock): Promise<void> {
  const data = canonicalJson(redact(input.data ?? {}));
  const postgres = usesPostgres();
  for (let attempt = 0; ; attempt++) {
    try {
      await db().$transaction(async (tx) => {
        if (postgres) await tx.$queryRawUnsafe(`SELECT 1 AS locked FROM (SELECT pg_advisory_xact_lock(${AUDIT_LOCK})) AS lock`);
        const last = await tx.auditEvent.findFirst({ orderBy: { seq: "desc" }, select: { seq: true, hash: true } });
        const event: StoredEvent = {
          seq: (last?.seq ?? 0) + 1,
          at: clock(),
          type: input.type,
          userId: input.userId ?? null,
          clientId: input.clientId ?? null,
          credentialId: input.credentialId ?? null,
          requestId: input.requestId ?? null,
          data,
          prevHash: last?.hash ?? GENESIS_HASH,
        };
        await tx.auditEvent.create({ data: { ...event, hash: eventHash(event) } });
      }, { maxWait: 10_000, timeout: 20_000 });
      return;
    } catch (error) {
      if (!isUniqueViolation(error) || attempt >= 50) throw error;
    }
  }
}

export type ChainVerification =
  | { ok: true; events: number; head: string }
  | { ok: false; events: number; brokenAt: number; reason: string };

/** Recomputes the whole chain: an edited, inserted or deleted row breaks it. */
export async function verifyAuditChain(): Promise<ChainVerification> {
  let prevHash = GENESIS_HASH;
  let expectedSeq = 1;
  const pageSize = 1000;
  for (;;) {
    const rows = await db().auditEvent.findMany({ where: { seq: { gte: expectedSeq } }, orderBy: { seq: "asc" }, take: pageSize });
    for (const row of rows) {
      if (row.seq !== expectedSeq) return { ok: false, events: expectedSeq - 1, brokenAt: expectedSeq, reason: `event ${expectedSeq} is missing` };
      if (row.prevHash !== prevHash) return { ok: false, events: expectedSeq - 1, brokenAt: row.seq, reason: `event ${row.seq} does not chain to event ${row.seq - 1}` };
      if (eventHash(row) !== row.hash) return { ok: false, events: expectedSeq - 1, brokenAt: row.seq, reason: `event ${row.seq} was altered` };
      prevHash = row.hash;
      expectedSeq++;
    }
    if (rows.length < pageSize) return { ok: true, events: expectedSeq - 1, head: prevHash };
  }
}
