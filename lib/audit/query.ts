import { db } from "@/lib/db";
import type { Prisma } from "@/lib/generated/prisma/client";
import { canonicalJson } from "@/lib/crypto";
import { AUDIT_EVENT_TYPES, type AuditEventType } from "./index";
import type { StoredEvent } from "./chain";

/**
 * Reading the audit log for one person (the /audit screen and its export).
 *
 * A person sees the events attributed to them (userId) and the events of their
 * clients that are attributed to nobody (client.registered, oauth.replay_detected,
 * client.revoked, …): "their clients" are the clients they granted and the API
 * keys they own. Another person's events about a shared OAuth client carry that
 * person's userId and so stay theirs.
 */

const AUDIT_PAGE_SIZE = 50;
const EXPORT_BATCH_SIZE = 500;
const MAX_ID_LENGTH = 200;

export type AuditFilters = {
  type?: AuditEventType;
  clientId?: string;
  credentialId?: string;
  /** inclusive lower bound */
  from?: Date;
  /** exclusive upper bound */
  to?: Date;
};

/** Keyset paging by seq: `before` for older events, `after` for newer ones; neither is the newest page. */
export type AuditPage = { before?: number; after?: number };

/** A stored event with its hash and its data parsed. */
export type AuditEventRow = Omit<StoredEvent, "data"> & { data: Record<string, unknown>; hash: string };

export type AuditEventList = {
  events: AuditEventRow[];
  /** `before` cursor of the next (older) page, or null at the oldest event */
  older: number | null;
  /** `after` cursor of the newer page, or null on the newest page */
  newer: number | null;
};

type SearchParams = Record<string, string | string[] | undefined> | URLSearchParams;

function param(params: SearchParams, name: string): string {
  const value = params instanceof URLSearchParams ? params.get(name) : params[name];
  return (Array.isArray(value) ? value[0] : (value ?? "")).trim();
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * A date input's value (YYYY-MM-DD, a day in UTC) or a full ISO 8601 instant.
 * A day as the upper bound means the whole of that day (up to the next midnight).
 */
export function parseAuditDate(value: string, bound: "from" | "to"): Date | null {
  if (DATE_ONLY.test(value)) {
    const day = new Date(`${value}T00:00:00.000Z`);
    if (Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== value) return null; // 2025-02-30
    return bound === "to" ? new Date(day.getTime() + 24 * 3600 * 1000) : day;
  }
  if (DATE_TIME.test(value)) {
    const instant = new Date(value);
    return Number.isNaN(instant.getTime()) ? null : instant;
  }
  return null;
}

export type ParsedAuditQuery = {
  filters: AuditFilters;
  page: AuditPage;
  /** what the person asked for, as typed (to refill the form and build links) */
  values: { type: string; client: string; credential: string; from: string; to: string };
  errors: string[];
};

function cursor(value: string): number | undefined | null {
  if (!value) return undefined;
  return /^[1-9]\d{0,14}$/.test(value) ? Number(value) : null;
}

/**
 * The query string of /audit and /api/audit/export: type, client, credential,
 * from, to (filters) and before / after (paging). Anything malformed is an
 * error to show, never silently dropped: a dropped filter would show more
 * than the person asked for.
 */
export function parseAuditQuery(params: SearchParams): ParsedAuditQuery {
  const values = {
    type: param(params, "type"),
    client: param(params, "client"),
    credential: param(params, "credential"),
    from: param(params, "from"),
    to: param(params, "to"),
  };
  const filters: AuditFilters = {};
  const errors: string[] = [];
  if (values.type) {
    if ((AUDIT_EVENT_TYPES as readonly string[]).includes(values.type)) filters.type = values.type as AuditEventType;
    else errors.push("Choose an event type from the list.");
  }
  for (const [key, name, label] of [
    ["client", "clientId", "client"],
    ["credential", "credentialId", "credential"],
  ] as const) {
    if (!values[key]) continue;
    if (values[key].length <= MAX_ID_LENGTH) filters[name] = values[key];
    else errors.push(`Choose a ${label} from the list.`);
  }
  for (const [key, label] of [
    ["from", "From"],
    ["to", "To"],
  ] as const) {
    if (!values[key]) continue;
    const date = parseAuditDate(values[key], key);
    if (date) filters[key] = date;
    else errors.push(`“${label}” must be a date (YYYY-MM-DD).`);
  }
  if (filters.from && filters.to && filters.from >= filters.to) errors.push("“From” must be before “To”.");

  const page: AuditPage = {};
  const before = cursor(param(params, "before"));
  const after = cursor(param(params, "after"));
  if (before === null || after === null || (before !== undefined && after !== undefined)) errors.push("That page does not exist.");
  else if (before !== undefined) page.before = before;
  else if (after !== undefined) page.after = after;
  return { filters, page, values, errors };
}

/** The query string for the same filters (and an optional cursor), without empty values. */
export function auditQueryString(values: ParsedAuditQuery["values"], page: AuditPage = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value) search.set(name, value);
  if (page.before !== undefined) search.set("before", String(page.before));
  if (page.after !== undefined) search.set("after", String(page.after));
  const text = search.toString();
  return text ? `?${text}` : "";
}

/** The clients whose unattributed events belong to this person. */
async function clientIdsOf(userId: string): Promise<string[]> {
  const [granted, keys] = await Promise.all([
    db().grant.findMany({ where: { userId }, select: { clientId: true }, distinct: ["clientId"] }),
    db().client.findMany({ where: { userId }, select: { id: true } }),
  ]);
  return [...new Set([...granted.map((grant) => grant.clientId), ...keys.map((key) => key.id)])];
}

/** The events a person may see: their own, and the unattributed events of their clients. */
export async function visibleTo(userId: string): Promise<Prisma.AuditEventWhereInput> {
  return { OR: [{ userId }, { userId: null, clientId: { in: await clientIdsOf(userId) } }] };
}

async function whereFor(userId: string, filters: AuditFilters): Promise<Prisma.AuditEventWhereInput[]> {
  const where: Prisma.AuditEventWhereInput[] = [await visibleTo(userId)];
  if (filters.type) where.push({ type: filters.type });
  if (filters.clientId) where.push({ clientId: filters.clientId });
  if (filters.credentialId) where.push({ credentialId: filters.credentialId });
  if (filters.from) where.push({ at: { gte: filters.from } });
  if (filters.to) where.push({ at: { lt: filters.to } });
  return where;
}

export function parseAuditData(data: string): Record<string, unknown> {
  try {
    const value = JSON.parse(data) as unknown;
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
  } catch {
    return { unreadable: data };
  }
}

type StoredRow = Omit<AuditEventRow, "data"> & { data: string };

function toRow(row: StoredRow): AuditEventRow {
  return {
    seq: row.seq,
    at: row.at,
    type: row.type,
    userId: row.userId,
    clientId: row.clientId,
    credentialId: row.credentialId,
    requestId: row.requestId,
    data: parseAuditData(row.data),
    prevHash: row.prevHash,
    hash: row.hash,
  };
}

/** One page of the person's events, newest first, keyset-paged by seq. */
export async function listAuditEvents(
  userId: string,
  filters: AuditFilters = {},
  page: AuditPage = {},
  pageSize = AUDIT_PAGE_SIZE,
): Promise<AuditEventList> {
  const base = await whereFor(userId, filters);
  const exists = async (seq: Prisma.IntFilter) =>
    Boolean(await db().auditEvent.findFirst({ where: { AND: [...base, { seq }] }, select: { seq: true } }));

  if (page.after !== undefined) {
    const rows = await db().auditEvent.findMany({
      where: { AND: [...base, { seq: { gt: page.after } }] },
      orderBy: { seq: "asc" },
      take: pageSize + 1,
    });
    const events = rows.slice(0, pageSize).reverse().map(toRow);
    const newer = rows.length > pageSize && events.length ? events[0].seq : null;
    const bottom = events.length ? events[events.length - 1].seq : page.after + 1;
    const older = (await exists({ lt: bottom })) ? bottom : null;
    return { events, older, newer };
  }

  const rows = await db().auditEvent.findMany({
    where: { AND: page.before !== undefined ? [...base, { seq: { lt: page.before } }] : base },
    orderBy: { seq: "desc" },
    take: pageSize + 1,
  });
  const events = rows.slice(0, pageSize).map(toRow);
  const older = rows.length > pageSize ? events[events.length - 1].seq : null;
  let newer: number | null = null;
  if (page.before !== undefined) {
    const top = events.length ? events[0].seq : page.before - 1;
    if (await exists({ gt: top })) newer = top;
  }
  return { events, older, newer };
}

/** One line of the JSON Lines export: the event as canonical JSON (sorted keys), data parsed. */
export function exportLine(event: AuditEventRow): string {
  return canonicalJson({
    seq: event.seq,
    at: event.at.toISOString(),
    type: event.type,
    clientId: event.clientId,
    credentialId: event.credentialId,
    requestId: event.requestId,
    data: event.data,
    hash: event.hash,
    prevHash: event.prevHash,
  });
}

/**
 * The same events as listAuditEvents, every page of them, oldest first (the
 * order of the chain), one JSON line each ("\n"-terminated). Rows are read in
 * keyset batches, so a long log never sits in memory.
 */
export async function* exportAuditEvents(
  userId: string,
  filters: AuditFilters = {},
  batchSize = EXPORT_BATCH_SIZE,
): AsyncGenerator<string> {
  const base = await whereFor(userId, filters);
  let after = 0;
  for (;;) {
    const rows = await db().auditEvent.findMany({
      where: { AND: [...base, { seq: { gt: after } }] },
      orderBy: { seq: "asc" },
      take: batchSize,
    });
    for (const row of rows) yield `${exportLine(toRow(row))}\n`;
    if (rows.length < batchSize) return;
    after = rows[rows.length - 1].seq;
  }
}

export type AuditChoices = {
  clients: { id: string; name: string; kind: string }[];
  credentials: { id: string; name: string }[];
};

/** The filter form's choices: the person's clients and credentials, by name. */
export async function auditChoices(userId: string): Promise<AuditChoices> {
  const ids = await clientIdsOf(userId);
  const [clients, credentials] = await Promise.all([
    db().client.findMany({
      where: { id: { in: ids } },
      select: { id: true, name: true, kind: true },
      orderBy: [{ name: "asc" }, { createdAt: "asc" }],
    }),
    db().credential.findMany({ where: { userId }, select: { id: true, name: true }, orderBy: [{ name: "asc" }, { createdAt: "asc" }] }),
  ]);
  return { clients, credentials };
}
