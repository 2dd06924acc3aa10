// The life of an agent request, whoever acts on it (the agent through /mcp, the
// person on the approval screen, a revocation): its transitions, expiry, the
// settlement of a broadcast transaction from its receipt, and the view an agent
// sees. Every transition is one conditional UPDATE, so a request is decided once
// and never runs twice, whichever instance or tab acts first.
import type { Hex, TransactionReceipt } from "viem";
import { db } from "@/lib/db";
import { config } from "@/lib/config";
import { recordAudit } from "@/lib/audit";
import { systemClock, type Clock } from "@/lib/clock";
import { AppError } from "@/lib/http/errors";
import { isFinalStatus, type RequestKind, type RequestStatus, type RequestView } from "@/contract";
import { onChain } from "./chains";

export const REQUEST_TTL_SECONDS = 10 * 60;

export class RequestError extends AppError {}

export type RequestRow = Awaited<ReturnType<ReturnType<typeof db>["agentRequest"]["findUniqueOrThrow"]>>;
type RequestRef = Pick<RequestRow, "id" | "userId" | "clientId" | "credentialId" | "kind">;

function approvalUrl(requestId: string): string {
  return `${config().appUrl}/approvals/${requestId}`;
}

export function toView(row: RequestRow): RequestView {
  const result = row.result ? (JSON.parse(row.result) as { signature?: string }) : {};
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
  };
}

export function reloadRequest(requestId: string): Promise<RequestRow> {
  return db().agentRequest.findUniqueOrThrow({ where: { id: requestId } });
}

/** Moves a request from one of `from` to `to`, audited; false when another actor moved it first. */
export async function transitionRequest(
  row: RequestRef,
  from: RequestStatus[],
  to: RequestStatus,
  data: { reason?: string; result?: string; txHash?: string },
  clock: Clock,
): Promise<boolean> {
  const now = clock();
  const changed = await db().agentRequest.updateMany({
    where: { id: row.id, status: { in: from } },
    data: {
      status: to,
      reason: data.reason,
      result: data.result,
      txHash: data.txHash,
      decidedAt: ["approved", "rejected", "cancelled"].includes(to) ? now : undefined,
      completedAt: isFinalStatus(to) ? now : undefined,
    },
  });
  if (changed.count) {
    await recordAudit(
      {
        type: "request.transition",
        userId: row.userId,
        clientId: row.clientId,
        credentialId: row.credentialId,
        requestId: row.id,
        data: { kind: row.kind, to, from, reason: data.reason, txHash: data.txHash },
      },
      clock,
    );
  }
  return changed.count === 1;
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
    const receipt = await receiptOf(row.chainId, row.txHash as Hex);
    if (!receipt) return row;
    await settleFromReceipt(row, receipt, clock);
    return reloadRequest(row.id);
  }
  return row;
}

/** Ends the pending requests that can no longer be approved: their wallet was removed, or their client's access or grant revoked. */
export async function cancelPendingRequests(
  where: { credentialId: string } | { clientId: string; userId?: string } | { grantId: string },
  reason: string,
  clock: Clock = systemClock,
): Promise<void> {
  const rows = await db().agentRequest.findMany({ where: { ...where, status: "pending" } });
  for (const row of rows) await transitionRequest(row, ["pending"], "cancelled", { reason }, clock);
}
