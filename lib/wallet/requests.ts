// Agent requests: what an agent asks to have signed, and their lifecycle
// (DESIGN.md §2). Every transition is one conditional UPDATE, so a request is
// decided once and never runs twice, whichever instance or tab acts first.
import { formatEther, getAddress, hashMessage, hashTypedData, keccak256, serializeTransaction, type TypedDataDefinition } from "viem";
import { db } from "@/lib/db";
import { config } from "@/lib/config";
import { recordAudit } from "@/lib/audit";
import { randomId } from "@/lib/crypto";
import { addSeconds, systemClock, type Clock } from "@/lib/clock";
import { AppError, NotFoundError } from "@/lib/http/errors";
import type { AgentContext } from "@/lib/oauth/bearer";
import type { RequestKind, RequestStatus, RequestView, ToolInput } from "@/lib/mcp/schemas";
import { chainById, onChain } from "./chains";

export const REQUEST_TTL_SECONDS = 10 * 60;
const FINAL: RequestStatus[] = ["completed", "failed", "rejected", "expired", "cancelled"];

/** What the person's browser signs, exactly. */
export type PreparedTransaction = {
  type: "eip1559";
  chainId: number;
  to: `0x${string}`;
  value: string;
  data: `0x${string}`;
  nonce: number;
  gas: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
};
export type RequestPayload =
  | { kind: "sign_message"; message: string }
  | { kind: "sign_typed_data"; typedData: TypedDataDefinition }
  | { kind: "send_transaction"; transaction: PreparedTransaction };

export class RequestError extends AppError {}

type Row = Awaited<ReturnType<ReturnType<typeof db>["agentRequest"]["findUniqueOrThrow"]>>;

export function approvalUrl(requestId: string): string {
  return `${config().appUrl}/approvals/${requestId}`;
}

export function toView(row: Row): RequestView {
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

export function payloadOf(row: { payload: string }): RequestPayload {
  return JSON.parse(row.payload, (_key, value) => value) as RequestPayload;
}

/** A credential of the agent's grant that may be asked for signatures. */
async function signingCredential(agent: AgentContext, credentialId: string) {
  const entry = agent.credentials.find((candidate) => candidate.credentialId === credentialId);
  if (!entry) throw new RequestError("credential_not_granted", `Credential ${credentialId} is not in this client's grant`, 403);
  if (entry.mode !== "approve") {
    throw new RequestError("read_only_credential", `Credential ${credentialId} is granted read-only: this client may not ask for signatures with it`, 403);
  }
  const credential = await db().credential.findFirst({ where: { id: credentialId, userId: agent.userId } });
  if (!credential) throw new RequestError("credential_not_granted", `Credential ${credentialId} is not in this client's grant`, 403);
  if (credential.kind !== "evm") throw new RequestError("watch_only_credential", `Credential ${credential.name} is watch-only: it cannot sign`, 400);
  return credential;
}

/** EIP-712 data without the domain type (viem derives it from the domain). */
function typedDataOf(input: ToolInput<"sign_typed_data">["typed_data"]): TypedDataDefinition {
  const { EIP712Domain: _domainType, ...types } = input.types;
  const typedData = { domain: input.domain, types, primaryType: input.primaryType, message: input.message } as unknown as TypedDataDefinition;
  try {
    hashTypedData(typedData);
  } catch (error) {
    throw new RequestError("invalid_typed_data", `The typed data is not valid EIP-712: ${((error as { shortMessage?: string }).shortMessage ?? (error as Error).message).split("\n")[0]}`, 400);
  }
  return typedData;
}

async function prepareTransaction(from: `0x${string}`, input: ToolInput<"send_transaction">): Promise<PreparedTransaction> {
  const chain = chainById(input.chain_id);
  const to = getAddress(input.to);
  const value = BigInt(input.value);
  const data = (input.data ?? "0x") as `0x${string}`;
  return onChain(chain.id, async (client) => {
    const [nonce, gas, fees] = await Promise.all([
      client.getTransactionCount({ address: from, blockTag: "pending" }),
      client.estimateGas({ account: from, to, value, data }),
      client.estimateFeesPerGas(),
    ]);
    return {
      type: "eip1559",
      chainId: chain.id,
      to,
      value: value.toString(),
      data,
      nonce,
      gas: gas.toString(),
      maxFeePerGas: fees.maxFeePerGas.toString(),
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString(),
    };
  });
}

export function transactionForSigning(transaction: PreparedTransaction) {
  return {
    type: "eip1559" as const,
    chainId: transaction.chainId,
    to: transaction.to,
    value: BigInt(transaction.value),
    data: transaction.data,
    nonce: transaction.nonce,
    gas: BigInt(transaction.gas),
    maxFeePerGas: BigInt(transaction.maxFeePerGas),
    maxPriorityFeePerGas: BigInt(transaction.maxPriorityFeePerGas),
  };
}

/** The digest the approval's passkey challenge binds to. */
export function payloadDigest(payload: RequestPayload): `0x${string}` {
  if (payload.kind === "sign_message") return hashMessage(payload.message);
  if (payload.kind === "sign_typed_data") return hashTypedData(payload.typedData);
  return keccak256(serializeTransaction(transactionForSigning(payload.transaction)));
}

async function transition(
  row: { id: string; userId: string; clientId: string; credentialId: string; kind: string },
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
      completedAt: FINAL.includes(to) ? now : undefined,
    },
  });
  if (changed.count) {
    await recordAudit(
      { type: "request.transition", userId: row.userId, clientId: row.clientId, credentialId: row.credentialId, requestId: row.id, data: { kind: row.kind, to, from, reason: data.reason, txHash: data.txHash } },
      clock,
    );
  }
  return changed.count === 1;
}
export { transition as transitionRequest };

/** A sensitive tool: creates a pending request for the person to approve. */
export async function createRequest(
  agent: AgentContext,
  input:
    | ({ kind: "sign_message" } & ToolInput<"sign_message">)
    | ({ kind: "sign_typed_data" } & ToolInput<"sign_typed_data">)
    | ({ kind: "send_transaction" } & ToolInput<"send_transaction">),
  clock: Clock = systemClock,
): Promise<RequestView> {
  const credential = await signingCredential(agent, input.credential_id);
  const address = credential.address as `0x${string}`;
  let payload: RequestPayload;
  if (input.kind === "sign_message") payload = { kind: "sign_message", message: input.message };
  else if (input.kind === "sign_typed_data") payload = { kind: "sign_typed_data", typedData: typedDataOf(input.typed_data) };
  else payload = { kind: "send_transaction", transaction: await prepareTransaction(address, input) };
  const now = clock();
  const row = await db().agentRequest.create({
    data: {
      id: randomId("rq_"),
      userId: agent.userId,
      grantId: agent.grantId,
      clientId: agent.clientId,
      credentialId: credential.id,
      kind: input.kind,
      status: "pending",
      chainId: payload.kind === "send_transaction" ? payload.transaction.chainId : null,
      payload: JSON.stringify(payload),
      digest: payloadDigest(payload),
      createdAt: now,
      expiresAt: addSeconds(now, REQUEST_TTL_SECONDS),
    },
  });
  await recordAudit(
    { type: "request.transition", userId: agent.userId, clientId: agent.clientId, credentialId: credential.id, requestId: row.id, data: { kind: row.kind, to: "pending", from: null } },
    clock,
  );
  return toView(row);
}

/**
 * Ends the pending requests that can no longer be approved because the
 * wallet was removed or the client's access revoked.
 */
export async function cancelPendingRequests(
  where: { credentialId: string } | { clientId: string; userId?: string },
  reason: string,
  clock: Clock = systemClock,
): Promise<void> {
  const rows = await db().agentRequest.findMany({ where: { ...where, status: "pending" } });
  for (const row of rows) await transition(row, ["pending"], "cancelled", { reason }, clock);
}

/** Pending requests past their 10 minutes become expired (lazily, on every read). */
async function expireIfDue(row: Row, clock: Clock): Promise<Row> {
  if (row.status !== "pending" || row.expiresAt > clock()) return row;
  await transition(row, ["pending"], "expired", { reason: "Not decided within 10 minutes" }, clock);
  return db().agentRequest.findUniqueOrThrow({ where: { id: row.id } });
}

/** A submitted transaction becomes completed or failed from its receipt. */
export async function reconcileSubmitted(row: Row, clock: Clock): Promise<Row> {
  if (row.status !== "submitted" || !row.txHash || row.chainId === null) return row;
  const receipt = await onChain(row.chainId, (client) => client.getTransactionReceipt({ hash: row.txHash as `0x${string}` })).catch(() => null);
  if (!receipt) return row;
  const ok = receipt.status === "success";
  await transition(row, ["submitted"], ok ? "completed" : "failed", { reason: ok ? undefined : "The transaction reverted" }, clock);
  return db().agentRequest.findUniqueOrThrow({ where: { id: row.id } });
}

async function refreshed(row: Row, clock: Clock): Promise<Row> {
  return reconcileSubmitted(await expireIfDue(row, clock), clock);
}

async function agentRequest(agent: AgentContext, requestId: string): Promise<Row> {
  const row = await db().agentRequest.findUnique({ where: { id: requestId } });
  if (!row || row.grantId !== agent.grantId) throw new NotFoundError(`Request ${requestId}`);
  return row;
}

export async function getRequest(agent: AgentContext, requestId: string, clock: Clock = systemClock): Promise<RequestView> {
  return toView(await refreshed(await agentRequest(agent, requestId), clock));
}

export async function listRequests(agent: AgentContext, input: ToolInput<"list_requests">, clock: Clock = systemClock): Promise<RequestView[]> {
  const rows = await db().agentRequest.findMany({
    where: { grantId: agent.grantId, ...(input.status ? { status: input.status } : {}) },
    orderBy: { createdAt: "desc" },
    take: input.limit ?? 20,
  });
  return Promise.all(rows.map(async (row) => toView(await refreshed(row, clock))));
}

export async function cancelRequest(agent: AgentContext, requestId: string, clock: Clock = systemClock): Promise<RequestView> {
  const row = await refreshed(await agentRequest(agent, requestId), clock);
  if (row.status !== "pending" || !(await transition(row, ["pending"], "cancelled", { reason: "Cancelled by the client" }, clock))) {
    const now = await db().agentRequest.findUniqueOrThrow({ where: { id: requestId } });
    throw new RequestError("not_pending", `Request ${requestId} is ${now.status}; only a pending request can be cancelled`, 409);
  }
  return toView(await db().agentRequest.findUniqueOrThrow({ where: { id: requestId } }));
}

/**
 * Waits up to `seconds` for the request to leave pending/approved/submitted,
 * polling the database (any instance may decide it), and reports progress.
 */
export async function waitForDecision(
  agent: AgentContext,
  requestId: string,
  seconds: number,
  onProgress?: (elapsed: number, total: number) => Promise<void>,
  clock: Clock = systemClock,
): Promise<RequestView> {
  const deadline = Date.now() + seconds * 1000;
  let view = await getRequest(agent, requestId, clock);
  let lastProgress = 0;
  while (!FINAL.includes(view.status) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(500, Math.max(0, deadline - Date.now()))));
    const elapsed = Math.round((seconds * 1000 - (deadline - Date.now())) / 1000);
    if (onProgress && elapsed > lastProgress) {
      lastProgress = elapsed;
      await onProgress(elapsed, seconds).catch(() => {});
    }
    view = await getRequest(agent, requestId, clock);
  }
  return view;
}

export function formatWei(wei: string, symbol: string): string {
  return `${formatEther(BigInt(wei))} ${symbol}`;
}
