// A transaction's nonce is fixed when the person approves it, not when the agent asks
// (docs/decisions/0014-nonces-at-signing.md): an agent may queue several transactions on one wallet, the person
// approves them in any order, and a rejected one leaves no gap. The nonce is fixed as the person's passkey
// challenge is issued, under one lock per wallet, and the challenge binds to the transaction with it.
import type { Address } from "viem";
import { exclusiveTransaction, type Tx } from "@/lib/db";
import { addSeconds, type Clock } from "@/lib/clock";
import { CHALLENGE_TTL_SECONDS } from "@/lib/auth/challenges";
import { onChain } from "./chains";
import { payloadDigest, payloadOf, type RequestPayload } from "./request-payload";
import { keccak256 } from "./keccak";
import { lockLiveGrant, RequestError, type RequestRow } from "./request-lifecycle";

/**
 * How long a fixed nonce stays the request's while the person approves: the challenge's life and a minute, so an
 * assertion made in time always finds it. Past it the nonce is free again; approving then starts over.
 */
const NONCE_HOLD_SECONDS = CHALLENGE_TTL_SECONDS + 60;

/** The one lock under which a wallet's nonces are fixed and its approvals decided. */
export function walletLock(credentialId: string): string {
  return `wallet:${credentialId}`;
}

/** The lowest nonce at or above the chain's pending count that none of `held` takes: gaps left by lapsed holds fill first. */
export function freeNonce(pendingCount: number, held: Iterable<number>): number {
  const taken = new Set(held);
  let nonce = pendingCount;
  while (taken.has(nonce)) nonce++;
  return nonce;
}

/**
 * The nonces this wallet's other transactions on the chain hold at `now`: a submitted one's until it settles (the
 * node may hold it), a fixed or approved one's while its hold lasts (an approval broadcasts at once; one that never
 * did, say the server stopped between, must not block the wallet for ever).
 */
async function heldNonces(tx: Tx, request: RequestRow, chainId: number, now: Date): Promise<number[]> {
  const rows = await tx.agentRequest.findMany({
    where: {
      credentialId: request.credentialId,
      chainId,
      kind: "send_transaction",
      id: { not: request.id },
      OR: [{ status: "submitted" }, { status: { in: ["pending", "approved"] }, nonceUntil: { gt: now } }],
    },
    select: { payload: true },
  });
  return rows.flatMap((row) => {
    const payload = payloadOf(row);
    return payload.kind === "send_transaction" && payload.transaction.nonce !== null ? [payload.transaction.nonce] : [];
  });
}

/**
 * Fixes the nonce of a pending transaction as the person starts approving it and holds it for them; returns the
 * request with its payload and digest (what the challenge binds to) updated. Under the wallet's lock, so two
 * approvals in flight never get one nonce, and while its grant is active.
 */
export async function fixNonce(request: RequestRow, address: Address, clock: Clock): Promise<RequestRow> {
  const asked = payloadOf(request);
  if (asked.kind !== "send_transaction") return request;
  const { chainId } = asked.transaction;
  // Read before the lock (a chain call must not hold it): the count only grows, and what this wallet's own
  // requests hold is read under the lock.
  const pendingCount = await onChain(chainId, (client) => client.getTransactionCount({ address, blockTag: "pending" }));
  const now = clock();
  return exclusiveTransaction(walletLock(request.credentialId), async (tx) => {
    await lockLiveGrant(tx, request.grantId);
    const current = await tx.agentRequest.findUniqueOrThrow({ where: { id: request.id } });
    if (current.status !== "pending") throw new RequestError("not_pending", `This request is ${current.status}`, 409);
    const nonce = freeNonce(pendingCount, await heldNonces(tx, current, chainId, now));
    const payload = payloadOf(current) as Extract<RequestPayload, { kind: "send_transaction" }>;
    const fixed: RequestPayload = { kind: "send_transaction", transaction: { ...payload.transaction, nonce } };
    return tx.agentRequest.update({
      where: { id: current.id },
      data: { payload: JSON.stringify(fixed), digest: payloadDigest(fixed, keccak256), nonceUntil: addSeconds(now, NONCE_HOLD_SECONDS) },
    });
  });
}

const SIGNED = ["approved", "submitted", "completed", "failed"];

/** The payload as the approval page shows it: a transaction's nonce once signed, or while it is held for the person. */
export function shownPayload(request: RequestRow, now: Date): RequestPayload {
  const payload = payloadOf(request);
  const held = request.status === "pending" && request.nonceUntil !== null && request.nonceUntil > now;
  if (payload.kind !== "send_transaction" || held || SIGNED.includes(request.status)) return payload;
  return { kind: "send_transaction", transaction: { ...payload.transaction, nonce: null } };
}
