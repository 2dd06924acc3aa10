// The person's side of an agent request: see it, approve it with a passkey
// (the browser signs), or reject it. The server accepts a signature only when
// the assertion answers a challenge bound to this request's digest AND the
// signature recovers to the credential's address over exactly the stored payload.
import { parseTransaction, type Address, type Hex, type TransactionSerialized } from "viem";
import { z } from "zod";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { db } from "@/lib/db";
import { heldLock, lastChangesOf, rowsOf, runTransaction, type TransactionScript } from "@/lib/db/transaction-script";
import { systemClock, type Clock } from "@/lib/clock";
import { NotFoundError } from "@/lib/http/errors";
import type { ClaimedSession } from "@/lib/auth/session";
import { presentedStepUp, stepUpOptions } from "@/lib/auth/step-up";
import { ChainUnansweredError, onChain, READ_BUDGET_MS } from "./chains";
import { fixNonce, shownPayload, walletLock } from "./nonces";
import { allowanceAmount, AllowanceAmountError, withAllowanceAmount } from "./allowance-amount";
import { contactNames, type ContactNames } from "./address-book";
import { headlineOf } from "./headline";
import { describeRequest, amountText, type RequestDescription } from "./request-description";
import { knownAddresses, QUEUE_CODE_DEADLINE_MS, requestRisk, type KnownAddresses } from "./risk";
import { tokenMetadata } from "./token-metadata";
import { keccak256 } from "./keccak";
import { recoverHashSigner, recoverTransactionSigner } from "./signer-recovery";
import { messageExcerpt, payloadDigest, payloadOf, transactionMismatch, x402PaymentValue, type RequestPayload } from "./request-payload";
import {
  currentRequest,
  findRequestWithWallet,
  grantHeld,
  grantIsLive,
  GrantRevokedError,
  receiptOf,
  recordTransition,
  reloadRequest,
  RequestError,
  requestWithWalletRead,
  settleFromReceipt,
  toView,
  transitionRequest,
  withWallet,
  type RequestRow,
  type RequestWithWallet,
} from "./request-lifecycle";

export const signatureSchema = z
  .string()
  .regex(/^0x[0-9a-fA-F]+$/, "must be 0x-prefixed hex")
  .max(2 + 2 * 200_000);

/** What the person decided beyond "yes": a lowered allowance amount, and that they understood the risk they were shown. */
export const decisionSchema = z.object({
  amount: z
    .string()
    .regex(/^\d{1,78}$/, "must be an integer amount in the token's smallest unit")
    .optional(),
  acknowledged: z.boolean().optional(),
});
type Decision = z.infer<typeof decisionSchema>;

/** An allowance the person lowered, in the token's units, as the audit log and the agent are told. */
type Lowered = { asked: string; signed: string; signedAmount: string };

/**
 * The payload the person signs: the stored one, or the same with the allowance amount they lowered. Refused when its
 * risk asks for the person's "I understand" and they did not give it: their browser signs, but a decision made
 * without it is not one this service records or broadcasts.
 */
async function decidedPayload(userId: string, asked: RequestPayload, decision: Decision, credentialId: string) {
  let payload = asked;
  let lowered: Lowered | null = null;
  if (decision.amount !== undefined) {
    const lowerable = await lowerableAllowance(asked);
    if (!lowerable) throw new RequestError("not_lowerable", "This request has no token allowance whose amount can be lowered", 400);
    const { allowance, token } = lowerable;
    const amount = BigInt(decision.amount);
    try {
      payload = withAllowanceAmount(asked, amount);
    } catch (error) {
      if (error instanceof AllowanceAmountError) throw new RequestError("amount_not_lower", error.message, 400);
      throw error;
    }
    lowered = { asked: amountText(token, allowance.amount), signed: amountText(token, amount), signedAmount: decision.amount };
  }
  const description = describeRequest(payload);
  let names: ReturnType<typeof contactNames> | undefined;
  const namesOnce = () => (names ??= contactNames(userId));
  const risk = await requestRisk(payload, description, { known: async () => knownAddresses(userId, await namesOnce()) });
  if (risk.acknowledge && !decision.acknowledged) {
    throw new RequestError(
      "acknowledgement_required",
      "This approval gives someone you do not know (a spender, delegate or operator) unlimited use of your funds: " +
        "confirm that you understand, or lower the amount",
      400,
    );
  }
  return {
    payload,
    lowered,
    acknowledged: risk.acknowledge,
    words: async () => decisionWords(await description, credentialId, await namesOnce()),
  };
}

/**
 * The request as the person's approval page put it when they decided, for the audit log: "Allow spending of unlimited
 * USDC for 0x9A9f…41c2 on Base" says what was decided where "call the contract 0x5FbD… with 0 ETH" did not.
 */
async function decisionWords(description: RequestDescription, credentialId: string, names: ContactNames): Promise<string> {
  const credential = await db().credential.findUnique({ where: { id: credentialId }, select: { name: true } });
  return headlineOf(description, credential?.name ?? "Removed wallet", names);
}

async function ownedRequest(userId: string, requestId: string, clock: Clock) {
  return (await owned(userId, await findRequestWithWallet(requestId), clock)).row;
}

/** One of the person's requests of `kind` that waits for their decision, or why it no longer does. */
export async function pendingRequest(userId: string, requestId: string, kind: RequestPayload["kind"], clock: Clock = systemClock) {
  const row = await ownedRequest(userId, requestId, clock);
  if (row.kind !== kind) throw new RequestError("wrong_kind", `This request asks for ${row.kind}, not ${kind}`, 409);
  if (row.status !== "pending") throw new RequestError("not_pending", notPendingMessage(row), 409);
  return row;
}

/** The request `found`, if it is the person's, brought up to date, and its wallet's address (null once removed). */
async function owned(userId: string, found: RequestWithWallet | null, clock: Clock) {
  if (!found || found.row.userId !== userId) throw new NotFoundError("The request");
  return { row: await currentRequest(found.row, clock), walletAddress: found.walletAddress };
}

/** Everything the approval screen shows, in the person's terms. */
export async function loadApproval(userId: string, requestId: string, clock: Clock = systemClock) {
  const row = await ownedRequest(userId, requestId, clock);
  const [client, credential] = await Promise.all([
    db().client.findUnique({ where: { id: row.clientId }, select: { name: true, kind: true, redirectUris: true } }),
    db().credential.findUnique({ where: { id: row.credentialId }, select: { name: true, address: true } }),
  ]);
  const payload = shownPayload(row, clock());
  return {
    view: toView(row),
    grantId: row.grantId,
    credentialId: row.credentialId,
    payload,
    clientName: client?.name ?? "Unknown client",
    clientKind: client?.kind ?? "oauth",
    credentialName: credential?.name ?? "Removed wallet",
    address: credential?.address ?? "",
  };
}

/** The hosts a grant's client names (lib/oauth's requestingClient), which a sign-in it asks for is checked against. */
type ClientHosts = (userId: string, grantId: string) => Promise<string[]>;

/** How many requests of each kind the queue lists: the count of those waiting is always whole. */
const LISTED = 50;

/**
 * The person's queue: the newest requests waiting (and how many wait in all, which may be more than are listed) and
 * the latest decided ones, each described as its page describes it (the same headline can be built from it), a
 * pending one with its risks (a sign-in checked against `clientHosts`), a message with its excerpt.
 */
export async function listApprovals(userId: string, clientHosts: ClientHosts = async () => [], clock: Clock = systemClock) {
  const waitingWhere = { userId, status: "pending", expiresAt: { gt: clock() } };
  const [waitingRows, recentRows, waiting, names] = await Promise.all([
    db().agentRequest.findMany({ where: waitingWhere, orderBy: { createdAt: "desc" }, take: LISTED }),
    db().agentRequest.findMany({ where: { userId, NOT: waitingWhere }, orderBy: { createdAt: "desc" }, take: LISTED }),
    db().agentRequest.count({ where: waitingWhere }),
    contactNames(userId),
  ]);
  const rows = [...waitingRows, ...recentRows];
  const [clients, credentials] = await Promise.all([
    db().client.findMany({ where: { id: { in: [...new Set(rows.map((row) => row.clientId))] } }, select: { id: true, name: true } }),
    db().credential.findMany({ where: { userId }, select: { id: true, name: true, address: true } }),
  ]);
  // Read once, and only when a listed request deals with someone (a message names no one).
  let known: Promise<KnownAddresses> | undefined;
  const knownOnce = () => (known ??= knownAddresses(userId, names));
  // The hosts of each grant's client, read once and only for a sign-in, which is checked against them.
  const hosts = new Map<string, Promise<string[]>>();
  const hostsOf = (grantId: string) => () => {
    if (!hosts.has(grantId)) hosts.set(grantId, clientHosts(userId, grantId));
    return hosts.get(grantId)!;
  };
  const clientNames = new Map(clients.map((client) => [client.id, client.name]));
  const credentialNames = new Map(credentials.map((credential) => [credential.id, credential.name]));
  const addresses = new Map(credentials.map((credential) => [credential.id, credential.address as Address]));
  const requests = await Promise.all(
    rows.map(async (listed) => {
      const row = await currentRequest(listed, clock);
      const payload = payloadOf(row);
      const description = await describeRequest(payload);
      return {
        id: row.id,
        kind: row.kind,
        status: row.status,
        clientName: clientNames.get(row.clientId) ?? "Unknown client",
        credentialName: credentialNames.get(row.credentialId) ?? "Removed wallet",
        createdAt: row.createdAt,
        description,
        risk:
          row.status === "pending"
            ? await requestRisk(
                payload,
                description,
                { known: knownOnce, holder: addresses.get(row.credentialId), askerHosts: hostsOf(row.grantId) },
                QUEUE_CODE_DEADLINE_MS,
              )
            : null,
        excerpt: payload.kind === "sign_message" ? messageExcerpt(payload.message) : null,
      };
    }),
  );
  return { requests, waiting };
}

/** The next request waiting for the person after `requestId` (the oldest, which expires first), and how many wait. */
export async function nextPendingRequest(userId: string, requestId: string, clock: Clock = systemClock) {
  const waiting = await db().agentRequest.findMany({
    where: { userId, status: "pending", expiresAt: { gt: clock() }, id: { not: requestId } },
    orderBy: { createdAt: "asc" },
    select: { id: true },
  });
  return { next: waiting[0]?.id ?? null, waiting: waiting.length };
}

/** The allowance amount the person may lower on the approval page, in the token's units; null when there is none. */
export async function lowerableAllowance(payload: RequestPayload) {
  const allowance = allowanceAmount(payload);
  const token = allowance && (await tokenMetadata(allowance.chainId, allowance.token, READ_BUDGET_MS));
  return allowance && token?.standard === "erc20" ? { allowance, token } : null;
}

/**
 * Step 1 of approving: a passkey challenge bound to the request's digest, for
 * the passkeys that sealed the key, and the seals the browser needs to unseal it.
 * A transaction's nonce is fixed now (lib/wallet/nonces.ts), so the digest and
 * the payload the browser signs carry it.
 */
export async function approvalOptions(userId: string, requestId: string, decision: Decision = {}, clock: Clock = systemClock) {
  const pending = await ownedRequest(userId, requestId, clock);
  if (pending.status !== "pending") throw new RequestError("not_pending", notPendingMessage(pending), 409);
  const credential = await db().credential.findUnique({ where: { id: pending.credentialId }, include: { seals: true } });
  if (!credential) throw new RequestError("wallet_removed", "This request's wallet was removed", 409);
  if (!credential.seals.length) throw new RequestError("no_seal", "This wallet's key is not sealed under any of your passkeys", 409);
  const row = await fixNonce(pending, credential.address as Address, clock);
  // The challenge binds to exactly what the browser is to sign: with a lowered amount, that payload's digest.
  const { payload } = await decidedPayload(userId, payloadOf(row), decision, row.credentialId);
  const options = await stepUpOptions(
    userId,
    "approval",
    row.id,
    payloadDigest(payload, keccak256),
    { allow: credential.seals.map((seal) => seal.passkeyId) },
    clock,
  );
  return {
    options,
    credentialId: credential.id,
    address: credential.address,
    payload,
    seals: credential.seals.map(({ passkeyId, ciphertext, iv, prfSalt }) => ({ passkeyId, ciphertext, iv, prfSalt })),
  };
}

/** `digest` is the payload's (payloadDigest): for a message or typed data, the very hash its signature signs. */
function recoveredSigner(payload: RequestPayload, digest: Hex, signature: Hex): string {
  try {
    if (payload.kind !== "send_transaction") return recoverHashSigner(digest, signature);
    if (payload.transaction.nonce === null) throw new RequestError("not_prepared", "Start the approval again: its nonce is not fixed", 409);
    const mismatch = transactionMismatch(parseTransaction(signature), payload.transaction);
    if (mismatch) throw new RequestError("transaction_mismatch", `The signed transaction's ${mismatch} differs from the prepared one`, 400);
    return recoverTransactionSigner(signature as TransactionSerialized);
  } catch (error) {
    if (error instanceof RequestError) throw error;
    throw new RequestError("invalid_signature", "The signature is malformed", 400);
  }
}

/** Refuses unless `signature` was made by the request's wallet (at `walletAddress`) over exactly `payload` (of `digest`). */
function checkSignature(walletAddress: string | null, payload: RequestPayload, digest: Hex, signature: Hex): void {
  if (!walletAddress) throw new RequestError("wallet_removed", "This request's wallet was removed", 409);
  const signer = recoveredSigner(payload, digest, signature);
  if (signer.toLowerCase() !== walletAddress.toLowerCase()) {
    throw new RequestError("signature_mismatch", "The signature was not made by this wallet's key over the requested payload", 400);
  }
}

/**
 * Step 2: verify the passkey assertion (bound to this request's digest) and the
 * signature over exactly the stored payload, then complete the request: a
 * signature is the result; a transaction is broadcast and followed to its receipt.
 * The passkey's counter moves whatever follows the assertion's check, as with every
 * assertion; the approval itself is one transaction with it.
 */
export async function approveRequest(
  session: ClaimedSession,
  requestId: string,
  input: { assertion: AuthenticationResponseJSON; signature: string } & Decision,
  clock: Clock = systemClock,
) {
  // The challenge is spent, the session confirmed and the request read in one round trip: an approval refused below
  // (the session over, the request not the person's, not pending, or its payload refused) spends the challenge too,
  // which was good for this person's approval of this request only.
  const presented = await presentedStepUp(input.assertion, "approval", [session.read, requestWithWalletRead(requestId)], clock);
  const userId = session.confirmed(presented.rows[0]).id;
  const { row, walletAddress } = await owned(userId, withWallet(presented.rows[1]), clock);
  if (row.status !== "pending") throw new RequestError("not_pending", notPendingMessage(row), 409);
  const { payload, lowered, acknowledged, words } = await decidedPayload(userId, payloadOf(row), input, row.credentialId);
  // Read beside the checks; a refused approval records nothing, so its words are dropped unread.
  const deciding = words();
  deciding.catch(() => {});
  const digest = payloadDigest(payload, keccak256);
  const assertion = await presented.checkedFor(userId, row.id, digest);
  let refusal: unknown = null;
  try {
    checkSignature(walletAddress, payload, digest, input.signature as Hex);
  } catch (error) {
    refusal = error;
  }
  const signed = payload.kind === "send_transaction" ? (input.signature as Hex) : null;
  const approval: Approval = { signature: input.signature, signedTransaction: signed, payload, digest, lowered };
  const now = clock();
  const outcome = await runTransaction(function* () {
    yield* assertion.counterMoved();
    return refusal ? { refusal } : yield* decided(row, approval, now);
  });
  if ("refusal" in outcome) throw outcome.refusal;
  if ("undecided" in outcome) throw await undecidable(row, signed !== null, now);
  const approved = recordTransition(
    row,
    ["pending"],
    "approved",
    { lowered: lowered ?? undefined, acknowledged: acknowledged ?? undefined, words: await deciding },
    clock,
  );
  if (!signed) {
    // Both recorded before either is awaited: they commit in one append, in order.
    await Promise.all([approved, recordTransition(row, ["approved"], "completed", {}, clock)]);
    return toView(outcome.decided);
  }
  await approved;
  return broadcast(row, (payload as Extract<RequestPayload, { kind: "send_transaction" }>).transaction.chainId, signed, clock);
}

function notPendingMessage(row: Pick<RequestRow, "status" | "reason">): string {
  return `This request is ${row.status}${row.reason ? ` (${row.reason})` : ""}: it can no longer be approved`;
}

/** What the person approved: `payload`, of `digest`, the one their signature covers. */
type Approval = { signature: string; signedTransaction: Hex | null; payload: RequestPayload; digest: Hex; lowered: Lowered | null };

type Decided = { decided: RequestRow } | { undecided: true };

// Times compared in SQL, as stored: pg would read them in the process's time zone.
const DECIDING = `SELECT "status", "reason", "digest", CASE WHEN "expiresAt" > ? THEN 1 ELSE 0 END AS "live",
  CASE WHEN "nonceUntil" > ? THEN 1 ELSE 0 END AS "nonceHeld", CASE WHEN ${grantIsLive} THEN 1 ELSE 0 END AS "grantLive"
  FROM "AgentRequest" WHERE "id" = ?`;

/**
 * Records the approval, once, under the wallet's lock (the one its nonce was fixed under), while the grant and its
 * client are active, held so until it commits: a revocation committed before it leaves it undecided, one after it
 * waits for it. The request must still be pending with the very payload the passkey approved, and a transaction's
 * nonce still held for it. A signed transaction is kept with it (approved), to hand to the node again if the node
 * loses it; a signature is its result (completed). A lowered allowance becomes the request's payload (what was signed)
 * and what its token caps count. Undecided is returned, not thrown: the passkey's counter, moved before it, stays moved.
 */
function* decided(row: RequestRow, approval: Approval, now: Date): TransactionScript<Decided> {
  const { signature, signedTransaction, payload, digest, lowered } = approval;
  yield* heldLock(walletLock(row.credentialId));
  yield* grantHeld(row.grantId);
  const signedAmount = lowered ? { signedAmount: lowered.signedAmount } : {};
  // An x402 authorization's signature completes the payment the agent sends back: kept ready for get_request.
  const payment = payload.kind === "sign_typed_data" && payload.x402 ? { payment: x402PaymentValue(payload.x402, signature) } : {};
  const result = JSON.stringify(signedTransaction ? { signedTransaction, ...signedAmount } : { signature, ...signedAmount, ...payment });
  const status = signedTransaction ? "approved" : "completed";
  const completedAt = signedTransaction ? null : now;
  const changed = lowered ? { payload: JSON.stringify(payload), digest, tokenAmount: lowered.signedAmount } : null;
  // Decided only while its grant is live and it is still pending, unexpired, with the payload the passkey approved and
  // (a transaction) its nonce held: one statement, the transaction's last; what stood in the way is read after it only
  // when it changed nothing.
  const decidedNow = yield* lastChangesOf(
    `UPDATE "AgentRequest" SET "status" = ?, "result" = ?, "decidedAt" = ?, "completedAt" = COALESCE(?, "completedAt")${
      changed ? `, "payload" = ?, "digest" = ?, "tokenAmount" = ?` : ""
    } WHERE "id" = ? AND "status" = 'pending' AND "expiresAt" > ? AND "digest" = ?${signedTransaction ? ` AND "nonceUntil" > ?` : ""}
      AND ${grantIsLive}`,
    status,
    result,
    now,
    completedAt,
    ...(changed ? [changed.payload, changed.digest, changed.tokenAmount] : []),
    row.id,
    now,
    row.digest,
    ...(signedTransaction ? [now] : []),
    row.grantId,
  );
  if (!decidedNow) return { undecided: true };
  return { decided: { ...row, ...changed, status, result, decidedAt: now, completedAt: completedAt ?? row.completedAt } };
}

/** Why the approval's UPDATE changed nothing, as the refusal the person sees. */
async function undecidable(row: RequestRow, transaction: boolean, now: Date): Promise<RequestError> {
  const [current] = await runTransaction(() =>
    rowsOf<{ status: string; reason: string | null; digest: string; live: number; nonceHeld: number; grantLive: number }>(
      DECIDING,
      now,
      now,
      row.grantId,
      row.id,
    ),
  );
  if (!current.grantLive) return new GrantRevokedError();
  if (current.status !== "pending") return new RequestError("not_pending", notPendingMessage(current), 409);
  if (!current.live) return new RequestError("not_pending", "This request expired before it was approved", 409);
  if (current.digest !== row.digest)
    return new RequestError("payload_changed", "This request changed while you approved it. Approve again.", 409);
  if (transaction && !current.nonceHeld) {
    return new RequestError("nonce_lapsed", "The nonce held for this transaction lapsed before the approval arrived. Approve again.", 409);
  }
  return new RequestError("not_pending", "This request could not be approved now. Approve again.", 409);
}

/**
 * Hands the signed transaction to the node. Refused by it: failed. No answer (a timeout, a dropped connection):
 * the node may hold it, so it is submitted under its own hash, and its receipt or a replacement settles it later
 * (currentRequest), its amount still counted meanwhile.
 */
async function broadcast(row: RequestRow, chainId: number, signed: Hex, clock: Clock) {
  const hash = keccak256(signed);
  let answered = true;
  try {
    await onChain(chainId, (client) => client.sendRawTransaction({ serializedTransaction: signed }));
  } catch (error) {
    if (!(error instanceof ChainUnansweredError)) {
      await transitionRequest(row, ["approved"], "failed", { reason: `Broadcast failed: ${(error as Error).message}` }, clock);
      return toView(await reloadRequest(row.id));
    }
    answered = false;
  }
  await transitionRequest(row, ["approved"], "submitted", { txHash: hash }, clock);
  // Follow it briefly when the node took it; a slower chain, or a silent node, is reconciled on the next read.
  const receipt = answered ? await receiptWithin(chainId, hash, RECEIPT_WAIT_MS) : null;
  if (receipt) await settleFromReceipt(row, receipt, clock);
  return toView(await reloadRequest(row.id));
}

const RECEIPT_WAIT_MS = 10_000;

/** The receipt if the transaction is mined within `ms` (polled quickly: dev chains mine at once). */
async function receiptWithin(chainId: number, hash: Hex, ms: number) {
  const deadline = Date.now() + ms;
  for (;;) {
    const receipt = await receiptOf(chainId, hash);
    if (receipt || Date.now() > deadline) return receipt;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

/** The person declines; no passkey is needed to say no. */
export async function rejectRequest(userId: string, requestId: string, reason: string | undefined, clock: Clock = systemClock) {
  const row = await ownedRequest(userId, requestId, clock);
  const payload = payloadOf(row);
  const words = await decisionWords(await describeRequest(payload), row.credentialId, await contactNames(userId));
  if (!(await transitionRequest(row, ["pending"], "rejected", { reason: reason?.trim() || "Rejected by the user", words }, clock))) {
    throw new RequestError("not_pending", `This request is ${row.status}`, 409);
  }
  return toView(await reloadRequest(requestId));
}
