// The agent's side of an allowance (MCP): send_transaction on an `allowance` credential pays from the grant's live
// allowance with no tap and is recorded as a request submitted with its transaction before the broadcast, completed
// by its receipt; above what is left it goes to the person (`ask`) or is refused in the person's units (`refuse`);
// get_allowance says what is left. The spending policy was checked first. From an allowance whose delegate key the
// agent holds (decision 0042) the server pays nothing: the agent signs its own payments.
import { formatUnits, getAddress, type Hex } from "viem";
import { recordAudit } from "@/lib/audit";
import { db } from "@/lib/db";
import { writing } from "@/lib/db/transaction-script";
import type { Clock } from "@/lib/clock";
import type { AllowanceOutput } from "@/contract";
import type { AgentContext } from "@/lib/wallet/agent-context";
import type { AgentCall, Idempotency } from "@/lib/wallet/idempotency";
import { createWithinPolicy } from "@/lib/wallet/policy";
import type { RequestPayload } from "@/lib/wallet/request-payload";
import type { AskedTransaction, Payer } from "@/lib/wallet/requests";
import {
  currentRequest,
  GrantRevokedError,
  reloadRequest,
  RequestError,
  toView,
  transitionEvent,
  type RequestRow,
} from "@/lib/wallet/request-lifecycle";
import { SendRefusedError } from "@/lib/wallet/reverts";
import { chainById } from "@/lib/wallet/chains";
import { allowancePaused, frameworkFor, storedDelegation, type Allowance } from "./allowances";
import { AllowancesChanged, liveAllowances } from "./live";
import type { Delegation, OverLimit } from "./caveats";
import { refusalWords, type Asked } from "./refusal-words";
import { leftFor } from "./holds";
import {
  AgentSignsError,
  AllowanceRefusal,
  leftOf,
  paymentOf,
  spendFromAllowance,
  spendTurnIn,
  type Payment,
  type RefusalReason,
  type SpendRecord,
  type SpendTurn,
} from "./spend";
import { allowanceViews, assetNames } from "./view";

type Moved = NonNullable<ReturnType<typeof paymentOf>>;

/** What the payment moves and the allowance's cap a period for it, to say how far above it is. */
function askedOf(allowance: Allowance, moved: Moved | null): Asked | undefined {
  if (!moved) return undefined;
  const framework = frameworkFor(allowance.chainId);
  // Every delegation of one asset has the same cap: the person chose one amount per asset.
  const cap = allowance.delegations.map((row) => storedDelegation(framework, row).meaning).find((meaning) => meaning.token === moved.token);
  return cap && { amount: moved.amount, perPeriod: cap.perPeriod };
}

/** The allowance's refusal of a payment that moves `moved`, in the person's units. */
export function refusalWordsOf(allowance: Allowance, refusal: AllowanceRefusal, moved: Moved | null, now: Date): Promise<string> {
  return refusalWords(allowance.chainId, refusal, now, askedOf(allowance, moved));
}

/**
 * A payment from an allowance whose delegate key the agent holds (decision 0042), judged with nothing held, signed or
 * sent: null when the allowance covers it (the agent signs it itself: prepare_allowance_payment's leaf, or its own
 * redemption), else the allowance's refusal (its asset or recipient, above what is left, its payments spent), which the
 * caller treats as a server-held allowance's: to the person when they chose `ask`. That needs no delegate key (the
 * person signs their own payment with their passkey), and it is how the person chose to hear of a payment the
 * allowance does not cover; one it covers is never sent there, where it would look like the allowance failed.
 */
export async function agentHeldJudgement(allowance: Allowance, moved: Moved | null, now: Date): Promise<AllowanceRefusal | null> {
  const overLimit = allowance.overLimit as OverLimit;
  const refusal = (reason: RefusalReason, message: string, left?: AllowanceRefusal["left"]) =>
    new AllowanceRefusal(reason, message, overLimit, left);
  if (!moved) return refusal("not_covered", "An allowance pays the chain's coin or a token's transfer(recipient, amount), nothing else.");
  const found = await leftFor(allowance, frameworkFor(allowance.chainId), moved, now);
  if (!found) return refusal("recipient_not_allowed", `This allowance does not pay ${moved.recipient} in this asset.`);
  if (found.callsLeft >= 1 && moved.amount <= found.available) return null;
  const reason = found.callsLeft < 1 ? "no_transfers_left" : "over_cap";
  return refusal(reason, "This payment is above what is left of the allowance.", leftOf(found, moved.token));
}

/** agentHeldJudgement's refusal; one the allowance covers throws AgentSignsError: the agent signs it itself. */
export async function agentHeldRefusal(allowance: Allowance, moved: Moved | null, now: Date): Promise<AllowanceRefusal> {
  const refusal = await agentHeldJudgement(allowance, moved, now);
  if (!refusal) throw new AgentSignsError();
  return refusal;
}

// The paid request's steps, past the ORM (through Prisma an update cost about 1.5 ms of CPU on every payment), each
// from the one status it expects: submitted with its transaction before the broadcast, completed by its receipt.
const REQUEST_SENT = `UPDATE "AgentRequest" SET "status" = 'submitted', "txHash" = ? WHERE "id" = ? AND "status" = 'approved'`;
const REQUEST_PAID = `UPDATE "AgentRequest" SET "status" = 'completed', "completedAt" = ? WHERE "id" = ? AND "status" = 'submitted'`;

const YOUR_FEE = "It waits for your approval; approved, your wallet pays it and its network fee.";

// The person's account signs nothing here: the relayer's redemption carries the payment, so the prepared
// transaction names the payment and no nonce, gas or fee of the person's.
const unsigned = (asked: AskedTransaction): RequestPayload => ({
  kind: "send_transaction",
  transaction: { type: "eip1559", ...asked, nonce: null, gas: "0", maxFeePerGas: "0", maxPriorityFeePerGas: "0" },
});

/**
 * A payment signed from the float of the allowance's agent account (lib/x402/account.ts, decision 0038), recorded as a
 * completed request within the spending policy, which judges and holds it as any payment: refused by it, nothing is
 * answered. The call's key is stored with it and its answer with the key, for a retry. Answers the request's id.
 */
export async function recordFromFloat(
  agent: AgentContext,
  credentialId: string,
  payment: AskedTransaction,
  clock: Clock,
  call: { allowanceId: string; idempotency?: Idempotency; answer: unknown },
): Promise<string> {
  const now = clock();
  const { id } = await createWithinPolicy(agent, credentialId, unsigned(payment), now, {
    status: "completed",
    reason: `Paid from the float of the allowance ${call.allowanceId}'s agent account, without a tap`,
    expiresAt: now,
    decidedAt: now,
    completedAt: now,
    ...(call.idempotency && { idempotency: { ...call.idempotency, answer: () => call.answer } }),
  });
  return id;
}

/**
 * A token payment above the most the allowance's any-payee delegation pays at once: the chain would let it pass up
 * to the cap, so the server refuses it before anything is sent (the refusal, for the person's choice above it).
 */
export async function abovePerPayment(allowance: Allowance, payment: Payment): Promise<AllowanceRefusal | null> {
  const moved = paymentOf(payment);
  const row = moved?.token && allowance.delegations.find((candidate) => candidate.perPaymentMax && candidate.token === moved.token);
  if (!moved || !row || moved.amount <= BigInt(row.perPaymentMax!)) return null;
  const names = await assetNames(allowance.chainId, moved.token);
  const units = (amount: bigint) => `${formatUnits(amount, names.decimals)} ${names.symbol}`;
  const most = units(BigInt(row.perPaymentMax!));
  return new AllowanceRefusal(
    "over_cap",
    `${units(moved.amount)} is above the ${most} this allowance pays any payee at once.`,
    allowance.overLimit as OverLimit,
  );
}

/**
 * Pays from the grant's live allowance for this credential and chain, recorded as a completed request; or says why
 * the payment goes to the person instead (no live allowance, a paused one, or above it and the person chose `ask`).
 * From an allowance the agent's key spends it pays only with `leaf`, the agent's signed one-time delegation of this
 * payment to a relayer (lib/allowances/agent-leaf.ts).
 * The allowance is the one this process remembers (lib/allowances/live.ts) unless `fresh`: a payment from a remembered
 * one that it would refuse or send to the person, or whose grant stopped, is asked again from a fresh read. The call's
 * idempotency key is stored with the payment's request, before anything is sent: a concurrent call with the key that
 * stored it first leaves this one nothing to send (IdempotencyKeyTaken). `judgedAs`: what the spending policy judges in
 * the payment's stead (the merchant's payment that a funding of the agent's account pays for).
 */
export async function payFromAllowance(
  agent: AgentContext,
  credentialId: string,
  payment: AskedTransaction,
  clock: Clock,
  call: AgentCall & { judgedAs?: AskedTransaction; leaf?: Delegation } = {},
  fresh = false,
): ReturnType<Payer> {
  const { called, idempotency, judgedAs, leaf } = call;
  const now = clock();
  const live = await liveAllowances(agent.grantId, credentialId, now, { fresh });
  // What a remembered read would refuse is asked again of the database (lib/allowances/live.ts).
  const again = () => payFromAllowance(agent, credentialId, payment, clock, call, true);
  const allowance = live.allowances.find((candidate) => candidate.chainId === payment.chainId);
  if (!allowance && live.remembered) return again();
  if (!allowance) {
    const paused = await allowancePaused(agent.grantId, credentialId, payment.chainId);
    const why = paused ? "This wallet's allowance is paused until you review it on Clients." : "No live allowance covers this wallet here.";
    return { toPerson: `${why} ${YOUR_FEE}` };
  }
  const payload = unsigned(payment);
  const asked: Payment = { to: getAddress(payment.to), value: BigInt(payment.value), data: payment.data };
  /** The allowance's refusal, before anything was sent, in the person's units: to the person, or to the agent. */
  const refused = async (error: AllowanceRefusal) => {
    const words = await refusalWordsOf(allowance, error, paymentOf(asked), now);
    // the agent's own signed leaf that the chain would refuse (sent before, say) is the agent's to hear of, not the person's
    const leafRefused = leaf && error.reason === "would_revert";
    if (!leafRefused && (["not_active", "expired", "suspended"].includes(error.reason) || error.overLimit === "ask"))
      return { toPerson: `${words} ${YOUR_FEE}` };
    throw new RequestError("allowance_refused", words, 409);
  };
  // a funding of the agent's account is held to the most per payment as the payment it funds (a top-up beside it is
  // the float the person chose, decision 0038)
  const judged: Payment = judgedAs ? { to: getAddress(judgedAs.to), value: BigInt(judgedAs.value), data: judgedAs.data } : asked;
  const overMost = await abovePerPayment(allowance, judged);
  if (overMost) return live.remembered ? again() : refused(overMost);
  // The agent holds this allowance's key: unless it signed this payment's leaf, refused before anything is held (a
  // remembered read asked again first).
  if (allowance.delegateKind === "agent" && !leaf) {
    return live.remembered ? again() : refused(await agentHeldRefusal(allowance, paymentOf(asked), now));
  }
  // Held against the policy's rolling caps under its lock before anything is sent, as a pending request is: of two
  // concurrent payments only as many pass a cap as fit. A grant revoked meanwhile refuses here. The same transaction
  // takes the payment's turn at the allowance when its lease is free (no wait), which the receipt's transaction ends,
  // and the relayer's with it when that is free too.
  let turn: (() => SpendTurn | null) | undefined;
  const reserving = createWithinPolicy(
    agent,
    credentialId,
    payload,
    now,
    {
      // the person approved it in advance, by signing the allowance
      status: "approved",
      reason: `Paid from the allowance ${allowance.id} on ${chainById(allowance.chainId).name}, without a tap`,
      expiresAt: now,
      decidedAt: now,
      idempotency,
      ...(judgedAs && { judgedAs: unsigned(judgedAs) }),
    },
    function* () {
      yield* live.unchanged(allowance.id);
      turn = yield* spendTurnIn(allowance, leaf?.delegate);
    },
  );
  const reserved = await reserving.catch((error: unknown) => {
    // a grant stopped since (with its allowances): said as a fresh read says it; a policy's refusal stands
    if (error instanceof AllowancesChanged || (live.remembered && error instanceof GrantRevokedError)) return null;
    throw error;
  });
  if (!reserved) return again();
  // The request as sent: submitted with its transaction in the write that records the spend before the broadcast, with
  // its audit event naming the payment; completed in the receipt's transaction, with its event and the call's. Not seen
  // mined within a minute, or this process stopped, it stays submitted (held against the caps) until its receipt
  // settles it (lib/allowances/reconcile.ts, or a later read).
  let paid: RequestRow = reserved;
  const sentOf = (txHash: Hex): SpendRecord => ({
    writes: [writing(REQUEST_SENT, txHash, reserved.id)],
    events: [
      {
        type: "request.transition",
        userId: agent.userId,
        clientId: agent.clientId,
        credentialId,
        requestId: reserved.id,
        // the payment's facts, as a pending request's first event carries them, so the audit log can say it in words
        data: {
          kind: reserved.kind,
          from: ["approved"],
          to: "submitted",
          txHash,
          allowanceId: allowance.id,
          chainId: payment.chainId,
          recipient: getAddress(payment.to),
          value: payment.value,
          call: payment.data !== "0x",
        },
      },
    ],
  });
  const landedOf = ({ txHash }: { txHash: Hex }): SpendRecord => {
    paid = { ...reserved, txHash, status: "completed", completedAt: clock() };
    return {
      writes: [writing(REQUEST_PAID, paid.completedAt, paid.id)],
      events: [transitionEvent(paid, ["submitted"], "completed", { txHash }), ...(called ? [called(paid.id)] : [])],
    };
  };
  let spent;
  try {
    spent = await spendFromAllowance(allowance, asked, { clientId: agent.clientId, sent: sentOf, landed: landedOf, turn: turn?.(), leaf });
  } catch (error) {
    if (!(error instanceof AllowanceRefusal)) {
      // Failed unless it may land: once recorded as sent (submitted), only the node's refusal says it never will; any
      // other failure (the chain unreachable while waiting, a revert) leaves it for its receipt to settle.
      const failing = error instanceof SendRefusedError ? ["approved", "submitted"] : ["approved"];
      await db().agentRequest.updateMany({
        where: { id: reserved.id, status: { in: failing } },
        data: { status: "failed", reason: (error as Error).message },
      });
      throw error;
    }
    // Refused before anything was sent: the hold goes, as if it had never been asked.
    await db().agentRequest.delete({ where: { id: reserved.id } });
    return refused(error);
  }
  // Not seen mined within a minute: submitted since before the broadcast, its call recorded now.
  if (spent.outcome !== "landed") {
    paid = { ...reserved, txHash: spent.txHash, status: "submitted" };
    if (called) await recordAudit(called(paid.id), clock);
  } else if (paid === reserved) {
    // Landed, its spend settled first by another look at the chain: the request as that look left it, settled from its
    // receipt if it has not been yet, never the approved row it started as.
    paid = await currentRequest(await reloadRequest(reserved.id), clock);
    if (called) await recordAudit(called(paid.id), clock);
  }
  return toView(paid);
}

/** get_allowance: the credential's allowances under this grant, what is left of each limit and when it resets. */
export async function allowanceForAgent(agent: AgentContext, credentialId: string): Promise<AllowanceOutput> {
  if (!agent.credentials.some((entry) => entry.credentialId === credentialId))
    throw new RequestError("credential_not_granted", `Credential ${credentialId} is not in this client's grant`, 403);
  const views = await allowanceViews({ grantId: agent.grantId, credentialId });
  return {
    credential_id: credentialId,
    allowances: views.map((view) => ({
      id: view.id,
      chain_id: view.chainId,
      status: view.status,
      over_limit: view.overLimit as "ask" | "refuse",
      expires_at: view.expiresAt,
      limits: view.limits.map((limit) => ({
        token: limit.token,
        symbol: limit.symbol,
        words: limit.words,
        per_period: limit.perPeriod,
        left: limit.left,
        resets_at: limit.resetsAt,
        transfers_left_in_all: limit.transfersLeft,
        transfers_left: limit.transfersLeft,
        ...(limit.inAgentAccount !== null && { in_agent_account: limit.inAgentAccount }),
      })),
      // an allowance the agent's own key spends: what that key needs to spend it
      ...(view.permission && { permission: view.permission }),
      ...(view.agentKey && { slices: view.slices.map((slice) => ({ slice_id: slice.id, to: slice.delegate, words: slice.words })) }),
    })),
  };
}
