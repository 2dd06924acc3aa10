// The life of an agent request, whoever acts on it (the agent through /mcp, the
// person on the approval screen, a revocation): its transitions, expiry, the
// settlement of a broadcast transaction from its receipt, and the view an agent
// sees. Every transition is one conditional UPDATE, so a request is decided once
// and never runs twice, whichever instance or tab acts first.
import {
  parseTransaction,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  type Hex,
  type TransactionReceipt,
  type TransactionSerialized,
} from "viem";
import { db, selectRows, usesPostgres, type Tx } from "@/lib/db";
import { PreparedSelect, storedTime } from "@/lib/db/prepared";
import { lastChangesOf, reading, required, runInPrismaTransaction, unanswered, type TransactionScript } from "@/lib/db/transaction-script";
import { config } from "@/lib/config";
import { recordAudit, type AuditInput } from "@/lib/audit";
import { systemClock, type Clock } from "@/lib/clock";
import { AppError } from "@/lib/http/errors";
import { isFinalStatus, type RequestKind, type RequestStatus, type RequestView } from "@/contract";
import { onChain } from "./chains";
import { recoverTransactionSigner } from "./signer-recovery";

export const REQUEST_TTL_SECONDS = 10 * 60;

export class RequestError extends AppError {}

export type RequestRow = Awaited<ReturnType<ReturnType<typeof db>["agentRequest"]["findUniqueOrThrow"]>>;
type RequestRef = Pick<RequestRow, "id" | "userId" | "clientId" | "credentialId" | "kind">;

export function approvalUrl(requestId: string): string {
  return `${config().appUrl}/approvals/${requestId}`;
}

export function toView(row: RequestRow): RequestView {
  const result = row.result
    ? (JSON.parse(row.result) as {
        signature?: string;
        signedAmount?: string;
        payment?: RequestView["payment"];
        permission?: RequestView["permission"];
      })
    : {};
  return {
    request_id: row.id,
    kind: row.kind as RequestKind,
    status: row.status as RequestStatus,
    credential_id: row.credentialId,
    chain_id: row.chainId,
    approval_url: approvalUrl(row.id),
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt.toISOString(),
    signature: result.signature ?? null,
    tx_hash: row.txHash,
    reason: row.reason,
    signed_amount: result.signedAmount ?? null,
    // only an approved x402 payment has one: other requests' views stay as they were
    ...(result.payment && { payment: result.payment }),
    // only a given allowance (request_allowance) has one
    ...(result.permission && { permission: result.permission }),
  };
}

type DateColumn = "createdAt" | "expiresAt" | "nonceUntil" | "decidedAt" | "completedAt";
/** A request's row as the database hands it past the ORM: SQLite gives its times as text. */
type StoredRequest = Omit<RequestRow, DateColumn> & Record<DateColumn, Date | string | null>;

const REQUEST_BY_ID = new PreparedSelect<StoredRequest>("request_by_id", `SELECT * FROM "AgentRequest" WHERE "id" = ?`);
/** A request with its wallet's address (null once the wallet is removed): what an approval checks the signature against. */
const REQUEST_WITH_WALLET = new PreparedSelect<StoredWithWallet>(
  "request_with_wallet",
  `SELECT r.*, c."address" AS "walletAddress" FROM "AgentRequest" r LEFT JOIN "Credential" c ON c."id" = r."credentialId" WHERE r."id" = ?`,
);
type StoredWithWallet = StoredRequest & { walletAddress: string | null };

/** A stored request as the ORM reads it. */
function requestRow({ createdAt, expiresAt, nonceUntil, decidedAt, completedAt, ...columns }: StoredRequest): RequestRow {
  const at = (value: Date | string | null) => (value === null ? null : storedTime(value));
  return {
    ...columns,
    createdAt: at(createdAt)!,
    expiresAt: at(expiresAt)!,
    nonceUntil: at(nonceUntil),
    decidedAt: at(decidedAt),
    completedAt: at(completedAt),
  };
}

const REQUEST_BY_KEY = new PreparedSelect<StoredRequest>(
  "request_by_idempotency_key",
  `SELECT * FROM "AgentRequest" WHERE "grantId" = ? AND "idempotencyTool" = ? AND "idempotencyKey" = ?`,
);

/** The grant's request that a call of `tool` with idempotency key `key` created; null when none holds it. */
export async function requestByKey(grantId: string, tool: string, key: string): Promise<RequestRow | null> {
  const [stored] = await selectRows(REQUEST_BY_KEY, grantId, tool, key);
  return stored ? requestRow(stored) : null;
}

/** A request, read past the ORM (a prepared statement), as the ORM reads it; null when there is none. */
async function findRequest(requestId: string): Promise<RequestRow | null> {
  const [stored] = await selectRows(REQUEST_BY_ID, requestId);
  return stored ? requestRow(stored) : null;
}

export type RequestWithWallet = { row: RequestRow; walletAddress: string | null };

/** findRequest, with the address of the request's wallet in the same read. */
export async function findRequestWithWallet(requestId: string): Promise<RequestWithWallet | null> {
  return withWallet(await selectRows(REQUEST_WITH_WALLET, requestId));
}

/** findRequestWithWallet as a statement of a transaction script, and what its rows say. */
export const requestWithWalletRead = (requestId: string) => reading(REQUEST_WITH_WALLET.sql, requestId);
export function withWallet([stored]: unknown[]): RequestWithWallet | null {
  if (!stored) return null;
  const { walletAddress, ...request } = stored as StoredWithWallet;
  return { row: requestRow(request), walletAddress };
}

export async function reloadRequest(requestId: string): Promise<RequestRow> {
  const row = await findRequest(requestId);
  if (!row) throw new Error(`Request ${requestId} not found`);
  return row;
}

type TransitionData = {
  reason?: string;
  result?: string;
  txHash?: string;
  /** An approval's allowance amount the person lowered, in the token's units (for the audit log). */
  lowered?: { asked: string; signed: string };
  /** The risk the person confirmed they understood before approving. */
  acknowledged?: string;
  /** What the person decided on, in the sentence their approval page showed (for the audit log). */
  words?: string;
};

/** The columns a transition to `to` writes at `now`. */
function transitionData(to: RequestStatus, data: TransitionData, now: Date) {
  return {
    status: to,
    reason: data.reason,
    result: data.result,
    txHash: data.txHash,
    decidedAt: ["approved", "rejected", "cancelled"].includes(to) ? now : undefined,
    completedAt: isFinalStatus(to) ? now : undefined,
  };
}

/** The audit event of a transition. */
export function transitionEvent(row: RequestRef, from: RequestStatus[], to: RequestStatus, data: TransitionData): AuditInput {
  return {
    type: "request.transition",
    userId: row.userId,
    clientId: row.clientId,
    credentialId: row.credentialId,
    requestId: row.id,
    data: {
      kind: row.kind,
      to,
      from,
      reason: data.reason,
      txHash: data.txHash,
      lowered: data.lowered && { asked: data.lowered.asked, signed: data.lowered.signed },
      acknowledged: data.acknowledged,
      words: data.words,
    },
  };
}

/** Records a transition that happened (after its transaction committed). */
export async function recordTransition(row: RequestRef, from: RequestStatus[], to: RequestStatus, data: TransitionData, clock: Clock) {
  await recordAudit(transitionEvent(row, from, to, data), clock);
}

/** Moves a request from one of `from` to `to`, audited; false when another actor moved it first. */
export async function transitionRequest(
  row: RequestRef,
  from: RequestStatus[],
  to: RequestStatus,
  data: TransitionData,
  clock: Clock,
): Promise<boolean> {
  const changed = await db().agentRequest.updateMany({
    where: { id: row.id, status: { in: from } },
    data: transitionData(to, data, clock()),
  });
  if (changed.count) await recordTransition(row, from, to, data, clock);
  return changed.count === 1;
}

/** The signed transaction an approval stored, to broadcast again when the node lost it. */
function signedTransactionOf(row: Pick<RequestRow, "kind" | "result">): Hex | null {
  if (row.kind !== "send_transaction" || !row.result) return null;
  return (JSON.parse(row.result) as { signedTransaction?: Hex }).signedTransaction ?? null;
}

/** A submitted transaction ends completed or failed by its receipt. */
export async function settleFromReceipt(row: RequestRef, receipt: Pick<TransactionReceipt, "status">, clock: Clock): Promise<void> {
  const ok = receipt.status === "success";
  await transitionRequest(row, ["submitted"], ok ? "completed" : "failed", { reason: ok ? undefined : "The transaction reverted" }, clock);
}

/** The receipt of a transaction, or null while it is not mined or the chain does not answer. */
export function receiptOf(chainId: number, hash: Hex) {
  return onChain(chainId, (client) => client.getTransactionReceipt({ hash })).catch(() => null);
}

/**
 * The request as it stands now: a pending request past its 10 minutes becomes
 * expired, a submitted one settles if its receipt is there. Applied lazily on
 * every read, by the agent's tools and the person's screens alike.
 */
export async function currentRequest(row: RequestRow, clock: Clock = systemClock): Promise<RequestRow> {
  if (row.status === "pending" && row.expiresAt <= clock()) {
    await transitionRequest(row, ["pending"], "expired", { reason: "Not decided within 10 minutes" }, clock);
    return reloadRequest(row.id);
  }
  if (row.status === "submitted" && row.txHash && row.chainId !== null) {
    return (await settleSubmitted(row, row.chainId, row.txHash as Hex, clock)) ? reloadRequest(row.id) : row;
  }
  return row;
}

/**
 * A relayer's transaction (a payment from an allowance) as its ledger has it: while `sent`, the process paying it
 * records the request's outcome with its receipt, or the spend's settlement records the receipt first
 * (lib/allowances), so that the request's move is made, and audited, once; `dropped`, another transaction took its
 * nonce and it will never land.
 */
const RELAYED_STATUS = new PreparedSelect<{ status: string }>(
  "relayed_status",
  `SELECT "status" FROM "RelayedTransaction" WHERE "hash" = ?`,
);

/**
 * Settles a submitted transaction when the chain says how it ended: by its receipt, or failed once its nonce was
 * mined in another transaction (a replacement). Until then it stays submitted, counted against the caps, because
 * the node may still hold it; one the node does not know (it dropped it, or the broadcast never reached it) is
 * handed to it again. A relayer's transaction settles once its receipt is in the relayer's ledger, or failed once the
 * ledger says it was dropped. True when it settled.
 */
async function settleSubmitted(row: RequestRow, chainId: number, hash: Hex, clock: Clock): Promise<boolean> {
  const [receipt, [relayed]] = await Promise.all([receiptOf(chainId, hash), selectRows(RELAYED_STATUS, hash)]);
  if (relayed?.status === "dropped" && !receipt) {
    const reason = "Its transaction was dropped and another took its place: nothing was paid";
    await transitionRequest(row, ["submitted"], "failed", { reason }, clock);
    return true;
  }
  if (receipt) {
    if (relayed?.status === "sent") return false;
    await settleFromReceipt(row, receipt, clock);
    return true;
  }
  const signed = signedTransactionOf(row);
  if (!signed) return false;
  const { nonce } = parseTransaction(signed);
  const from = recoverTransactionSigner(signed as TransactionSerialized);
  try {
    const mined = await onChain(chainId, (client) => client.getTransactionCount({ address: from, blockTag: "latest" }));
    if (mined > (nonce ?? 0)) {
      // Asked after the count: had this transaction taken the nonce, its receipt would be there now.
      const late = await onChain(chainId, (client) => client.getTransactionReceipt({ hash }).catch(notFoundAs(null)));
      if (late) await settleFromReceipt(row, late, clock);
      else
        await transitionRequest(
          row,
          ["submitted"],
          "failed",
          { reason: "Another transaction used its nonce: it will never be mined" },
          clock,
        );
      return true;
    }
    const known = await onChain(chainId, (client) => client.getTransaction({ hash }).then(() => true, notFoundAs(false)));
    if (!known) await onChain(chainId, (client) => client.sendRawTransaction({ serializedTransaction: signed }));
  } catch {
    // The chain did not answer, or refused it again: a later read asks again.
  }
  return false;
}

/** For a viem lookup: "not found" is `value`, any other error stays an error. */
function notFoundAs<T>(value: T) {
  return (error: unknown) => {
    if (error instanceof TransactionNotFoundError || error instanceof TransactionReceiptNotFoundError) return value;
    throw error;
  };
}

/** Which pending requests a revocation or a removal ends. */
export type Ended = { credentialId: string } | { clientId: string; userId?: string } | { grantId: string };

/**
 * Cancels, inside the transaction `tx` that revokes or removes what they depend on (their wallet, their client's
 * access, their grant), the pending requests that can no longer be approved; returns the rows it cancelled, whose
 * events (cancellationEvents) go into the same transaction. A request created or approved concurrently is either
 * seen here or sees the revocation (lockLiveGrant).
 */
export function cancelPendingIn(tx: Tx, where: Ended, reason: string, now: Date): Promise<RequestRow[]> {
  return tx.agentRequest.updateManyAndReturn({
    where: { ...where, status: "pending" },
    data: transitionData("cancelled", { reason }, now),
  });
}

export function cancellationEvents(rows: RequestRow[], reason: string): AuditInput[] {
  return rows.map((row) => transitionEvent(row, ["pending"], "cancelled", { reason }));
}

export class GrantRevokedError extends RequestError {
  constructor() {
    super("grant_revoked", "This client's access was revoked: its requests can no longer be created, approved or sent", 409);
  }
}

// The grant and its client, found by the grant's id.
const GRANT_AND_CLIENT = `FROM "Client" c JOIN "Grant" g ON g."clientId" = c."id" WHERE g."id" = ?`;
const BOTH_ACTIVE = `g."status" = 'active' AND c."status" = 'active'`;
// PostgreSQL locks a join's rows in the order FOR SHARE OF names them: the client's first, as revocations update it.
const forShare = () => (usesPostgres() ? ` FOR SHARE OF c, g` : "");

/**
 * Refuses unless the grant and its client are active, and keeps them so until the transaction ends: on PostgreSQL
 * the rows are locked for share (the client's first, as revocations update it first), so a revocation waits for the
 * transaction or the transaction for it; on SQLite the transaction holds the single write lock already. Creating a
 * request runs it in its transaction, so a request of a revoked grant is never created. The script does not wait for
 * it: the row is required (a revoked grant has none).
 */
export function* grantStaysLive(grantId: string): TransactionScript<void> {
  yield* required(() => new GrantRevokedError(), `SELECT g."id" ${GRANT_AND_CLIENT} AND ${BOTH_ACTIVE}${forShare()}`, grantId);
}

/**
 * Keeps the grant and its client as they are until the transaction ends, whatever their status, as grantStaysLive
 * does: a later statement of the transaction asks `grantIsLive`, and its answer holds until COMMIT.
 */
export function* grantHeld(grantId: string): TransactionScript<void> {
  if (usesPostgres()) yield* unanswered(`SELECT g."id" ${GRANT_AND_CLIENT}${forShare()}`, grantId);
}

/** An SQL condition, with the grant's id as its one parameter: the grant and its client are active. */
export const grantIsLive = `EXISTS (SELECT 1 ${GRANT_AND_CLIENT} AND ${BOTH_ACTIVE})`;

/** grantStaysLive in a Prisma transaction `tx`. */
export function lockLiveGrant(tx: Tx, grantId: string): Promise<void> {
  return runInPrismaTransaction(tx, grantStaysLive(grantId));
}

const REQUEST_COLUMNS = [
  "id",
  "userId",
  "grantId",
  "clientId",
  "credentialId",
  "kind",
  "status",
  "chainId",
  "payload",
  "digest",
  "nativeValue",
  "tokenAddress",
  "tokenAmount",
  "createdAt",
  "expiresAt",
  "reason",
  "decidedAt",
  "completedAt",
  "idempotencyTool",
  "idempotencyKey",
  "idempotencyHash",
  "toolAnswer",
] as const;
const INSERT_REQUEST = `INSERT INTO "AgentRequest" (${REQUEST_COLUMNS.map((column) => `"${column}"`).join(", ")})
  VALUES (${REQUEST_COLUMNS.map(() => "?").join(", ")})`;
/** A request with an idempotency key: none when another request of the grant holds the key for that tool already. */
const INSERT_KEYED_REQUEST = `${INSERT_REQUEST}
  ON CONFLICT ("grantId", "idempotencyTool", "idempotencyKey") DO NOTHING RETURNING "id"`;

/** The insert found the idempotency key taken: a call with it created its request first (lib/wallet/idempotency.ts). */
export class IdempotencyKeyTaken extends Error {}

const KEY_FREE = `SELECT 1 AS "free" WHERE NOT EXISTS
  (SELECT 1 FROM "AgentRequest" WHERE "grantId" = ? AND "idempotencyTool" = ? AND "idempotencyKey" = ?)`;

/**
 * Refuses (IdempotencyKeyTaken) when a request of the grant holds the key for the tool already, before the transaction
 * locks anything for the request: a plain read waits for no one, where on PostgreSQL the insert's unique check waits
 * for a transaction updating the row that holds the key — the winning call's send, which itself waits for the
 * allowance's row that a losing call's transaction holds for share (a deadlock that failed the winner's payment).
 */
export function* keyStaysFree(grantId: string, tool: string, key: string): TransactionScript<void> {
  yield* required(() => new IdempotencyKeyTaken(), KEY_FREE, grantId, tool, key);
}

/**
 * Stores a new request, its transaction's last statement; returns its row as the ORM would read it. A request with an
 * idempotency key whose key another request of the grant holds for the tool is refused (IdempotencyKeyTaken) and the
 * transaction rolled back: the unique index decides between concurrent calls, on either database.
 */
export function* insertRequest(request: Pick<RequestRow, (typeof REQUEST_COLUMNS)[number]>): TransactionScript<RequestRow> {
  const values = REQUEST_COLUMNS.map((column) => request[column]);
  if (request.idempotencyKey === null) yield* lastChangesOf(INSERT_REQUEST, ...values);
  else yield* required(() => new IdempotencyKeyTaken(), INSERT_KEYED_REQUEST, ...values);
  return {
    ...request,
    result: null,
    txHash: null,
    nonce: null,
    nonceUntil: null,
  };
}
