// pay_x402: the agent hands over a resource's x402 requirement; within a live allowance of its grant the delegate key
// signs a one-time erc7710 payment with no tap, and the agent gets the header to retry with. Agent Wallet sends
// nothing on chain and never fetches the resource: the payee's facilitator redeems the payment, later or never, so
// the signed amount is held against the allowance until the chain shows it redeemed or it has expired. Payments of
// one allowance take turns under its lease (as its transfers do), taken apart or inside the policy's transaction: each
// is checked against the chain (or its answer kept since nothing moved it) and the holds as the previous one left
// them, so never more is signed than the allowance's cap. What the allowance does not cover
// (or, when the person chose `ask`, goes above) is asked of the person as the one tap an `approve` credential's is.
// An allowance whose delegate key the agent holds (decision 0042) the agent pays from itself: nothing is signed here.
import { encodeFunctionData, erc20Abi, formatUnits, type Address } from "viem";
import { auditedIn, type AuditInput, type CallEvent } from "@/lib/audit";
import { systemClock, type Clock } from "@/lib/clock";
import { config } from "@/lib/config";
import { randomId } from "@/lib/crypto";
import type { TransactionScript } from "@/lib/db/transaction-script";
import { AppError } from "@/lib/http/errors";
import { allowancePaused, findAllowance, frameworkFor, storedDelegation, type DelegationState } from "@/lib/allowances/allowances";
import { decidedUnderLease, hold, holdAtOnce, keptState, leftFor, type NewHold } from "@/lib/allowances/holds";
import { AllowancesChanged, liveAllowances, type LiveAllowances } from "@/lib/allowances/live";
import { withLease, type LeaseHolding } from "@/lib/allowances/lease";
import { refusalWords } from "@/lib/allowances/refusal-words";
import { inFlightOf, leftOf, type AllowanceRefusal } from "@/lib/allowances/spend";
import { agentHeldRefusal, refusalWordsOf } from "@/lib/allowances/agent";
import { assetNames } from "@/lib/allowances/view";
import type { ToolOutput } from "@/contract";
import type { AgentContext } from "@/lib/wallet/agent-context";
import type { AgentCall, Idempotency } from "@/lib/wallet/idempotency";
import { createWithinPolicy, PolicyViolation } from "@/lib/wallet/policy";
import { getRequest, policyRefusal } from "@/lib/wallet/requests";
import type { RequestPayload } from "@/lib/wallet/request-payload";
import { currentRequest, GrantRevokedError, RequestError, type RequestRow } from "@/lib/wallet/request-lifecycle";
import { paymentAnswer, paymentTerms, type PaidX402 } from "./answer";
import { cheapest, judgeOffer, payeesOf, X402NotPayableError, type Choice, type Payable } from "./choose";
import { judgeForAccount, payFromAgentAccount, type AccountChoice } from "./account";
import { readableAssets } from "./asset";
import { paymentLeaf, signLeaf } from "./leaf";
import { oneTapChoice, payerOf, payWithOneTap, type Authorizable } from "./one-tap";
import { parsePaymentRequired, type PaymentRequired } from "./requirement";

/** Above what is left of the allowance (with what earlier payments hold): nothing was signed. */
export class X402AllowanceRefusal extends AppError {
  constructor(
    message: string,
    readonly left: { token: Address; symbol: string; available: string; resetsAt: string } | null,
    /** why the payment goes to the person instead, when it does: the allowance stopped, or the person chose `ask` */
    readonly forPerson: string | null = null,
  ) {
    super("allowance_refused", message, 409);
  }
}

export type { PaidX402 } from "./answer";

/** The credential's grant entry, when this client may pay with it at all. */
function grantedForPayments(agent: AgentContext, credentialId: string) {
  const entry = agent.credentials.find((candidate) => candidate.credentialId === credentialId);
  if (!entry) throw new RequestError("credential_not_granted", `Credential ${credentialId} is not in this client's grant`, 403);
  if (entry.mode === "read")
    throw new RequestError("read_only_credential", `Credential ${credentialId} is granted read-only: this client may not pay with it`, 403);
  return entry;
}

/** A live allowance's delegation, as a payment chooses among them. */
type LiveDelegation = {
  allowanceId: string;
  chainId: number;
  hash: string;
  signed: string;
  perPaymentMax: string | null;
  float: string | null;
  expiresAt: Date;
};

/** Each delegation of the grant's live allowances, newest allowance first. */
const delegationsOf = (live: LiveAllowances): LiveDelegation[] =>
  live.allowances.flatMap(({ id, chainId, expiresAt, delegations }) =>
    delegations.map(({ hash, signed, perPaymentMax, float }) => ({
      allowanceId: id,
      chainId,
      hash,
      signed,
      perPaymentMax,
      float,
      expiresAt,
    })),
  );

/** What the grant's live allowances for this credential can pay, per chain and token. */
function payablesOf(live: LiveDelegation[]): Payable[] {
  return live.flatMap((row) => {
    const framework = frameworkFor(row.chainId);
    if (!framework.paymentEnforcers) return [];
    const { meaning } = storedDelegation(framework, row);
    if (!meaning.token) return [];
    return [
      { allowanceId: row.allowanceId, delegationHash: row.hash, chainId: row.chainId, token: meaning.token, ...payeesOf(meaning, row) },
    ];
  });
}

/** Refused in the person's units: what is left once the holds are counted, and when it resets. */
async function overCap(
  choice: Choice,
  left: NonNullable<AllowanceRefusal["left"]>,
  perPeriod: bigint,
  now: Date,
  overLimit: string,
): Promise<never> {
  const names = await assetNames(choice.chainId, choice.asset);
  const words = await refusalWords(choice.chainId, { left, message: "" }, now, { amount: choice.amount, perPeriod });
  const shown = { token: choice.asset, symbol: names.symbol, available: left.available, resetsAt: left.resetsAt };
  throw new X402AllowanceRefusal(`${words} Nothing was signed.`, shown, overLimit === "ask" ? words : null);
}

/**
 * Who pays: the agent, with the credential, the call's own audit event when it is recorded with the payment's, and its
 * idempotency key, stored with the payment's request.
 */
type Payer = {
  agent: AgentContext;
  credential: { id: string; name: string };
  clock: Clock;
  called?: CallEvent;
  idempotency?: Idempotency;
  /** in the payment's transaction: the allowances it was chosen among unchanged since they were read (live.ts) */
  unchanged: () => TransactionScript<void>;
};

/**
 * Signs the chosen payment, its amount held and counted against the policy. Decided at once, in the policy's
 * transaction, when what the chain said of the delegation at the allowance's version still stands and leaves room for
 * it (holdAtOnce); otherwise, and for every refusal, under the allowance's lease against the chain.
 */
async function signWithinAllowance(payer: Payer, required: PaymentRequired, choice: Choice, paying: LiveDelegation) {
  return (
    (await signedAtOnce(payer, required, choice, paying)) ??
    withLease(`allowance:${choice.allowanceId}`, (lease) => signedInTurn(payer, required, choice, lease))
  );
}

async function signedAtOnce(payer: Payer, required: PaymentRequired, choice: Choice, paying: LiveDelegation): Promise<PaidX402 | null> {
  const now = payer.clock();
  const kept = keptState(choice.chainId, paying.hash, now);
  if (!kept) return null;
  const from = { allowanceId: paying.allowanceId, state: kept.state, expiresAt: paying.expiresAt };
  try {
    return await holdAndSign(payer, required, choice, from, now, (held) => holdAtOnce(held, kept.state, kept.version));
  } catch (error) {
    if (decidedUnderLease(error) || error instanceof PolicyViolation) return null;
    throw error;
  }
}

/** The allowance stopped paying (revoked, paused or expired) before the payment was held: nothing was signed. */
const noLongerLive = () =>
  new X402AllowanceRefusal("This allowance is no longer live. Nothing was signed.", null, "This wallet's allowance stopped paying.");

/**
 * Under the allowance's lease: checked against the chain and the holds as the previous payment left them, and held
 * only while the allowance is still active (a revocation committed since the read refuses it) and the lease still
 * this payment's (one that lapsed and was taken over refuses it: lease_lost).
 */
async function signedInTurn(payer: Payer, required: PaymentRequired, choice: Choice, lease: LeaseHolding): Promise<PaidX402> {
  const now = payer.clock();
  const allowance = await findAllowance(choice.allowanceId);
  if (allowance.status !== "active" || allowance.expiresAt <= now) throw noLongerLive();
  const framework = frameworkFor(allowance.chainId);
  // Transfers in flight hold what they move until mined: counted, and those the chain has decided settled first.
  const payment = { token: choice.asset, recipient: choice.payee, amount: choice.amount };
  const found = await leftFor(allowance, framework, payment, now, {
    version: allowance.stateVersion,
    inFlight: inFlightOf(allowance.id, allowance.chainId),
  });
  if (!found) {
    const words = `${choice.payee} is not among this allowance's recipients.`;
    throw new X402AllowanceRefusal(`${words} Nothing was signed.`, null, words);
  }
  const { state, available } = found;
  const left = leftOf(found, choice.asset);
  if (left.transfersLeft < 1 || choice.amount > available) await overCap(choice, left, state.meaning.perPeriod, now, allowance.overLimit);
  // Counted against the policy's caps like any payment of the grant, under the policy's lock; a refusal there comes
  // before anything is signed.
  const from = { allowanceId: allowance.id, state, expiresAt: allowance.expiresAt };
  return holdAndSign(payer, required, choice, from, now, (held) => hold(held, noLongerLive, lease)).catch(async (error: unknown) => {
    if (error instanceof PolicyViolation) throw await policyRefusal(payer.agent, payer.credential, "x402", error, payer.clock);
    throw error;
  });
}

/**
 * Signs the payment's leaf, then creates its request within the policy, with its hold (`held`: the script that writes
 * it) and its audit events (the call's with them) in the policy's transaction: one commit. The signed payment is
 * answered only once its hold has committed; one refused there leaves nothing behind but the discarded signature. With
 * an idempotency key the answer is stored with the request, for a retry: a key taken already by a concurrent call
 * refuses the transaction, hold and all.
 */
async function holdAndSign(
  { agent, credential, clock, called, idempotency, unchanged }: Payer,
  required: PaymentRequired,
  choice: Choice,
  from: { allowanceId: string; state: DelegationState; expiresAt: Date },
  now: Date,
  held: (payment: NewHold) => TransactionScript<void>,
): Promise<PaidX402> {
  const framework = frameworkFor(choice.chainId);
  const payload: RequestPayload = {
    kind: "send_transaction",
    transaction: {
      type: "eip1559",
      chainId: choice.chainId,
      to: choice.asset,
      value: "0",
      data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [choice.payee, choice.amount] }),
      nonce: null,
      gas: "0",
      maxFeePerGas: "0",
      maxPriorityFeePerGas: "0",
    },
  };
  // The leaf never outlives the allowance it derives from.
  const expiresAt = Math.min(
    Math.floor(now.getTime() / 1000) + choice.offer.maxTimeoutSeconds,
    Math.floor(from.expiresAt.getTime() / 1000),
  );
  const leaf = await paymentLeaf(framework, framework.paymentEnforcers!, from.state, {
    chainId: choice.chainId,
    asset: choice.asset,
    payee: choice.payee,
    amount: choice.amount,
    redeemers: choice.redeemers,
    expiresAt,
  });
  const paymentId = randomId("xp_");
  const paid = {
    ...paymentAnswer(required, choice.offer, await signLeaf(framework, leaf)),
    payment_id: paymentId,
    ...(await paymentTerms(required, choice, expiresAt)),
    allowance_id: from.allowanceId,
  } satisfies PaidX402;
  const spent = (requestId: string): AuditInput => ({
    type: "allowance.spent",
    userId: agent.userId,
    clientId: agent.clientId,
    credentialId: credential.id,
    requestId,
    data: {
      allowanceId: from.allowanceId,
      kind: "x402",
      paymentId,
      resource: required.resource.url,
      recipient: choice.payee,
      amount: `${choice.amount} of token ${choice.asset}`,
      outcome: "signed",
    },
  });
  let audited: (() => Promise<void>) | undefined;
  await createWithinPolicy(
    agent,
    credential.id,
    payload,
    now,
    {
      status: "completed",
      reason: `x402 payment for ${required.resource.url}, signed within the allowance ${from.allowanceId} without a tap`,
      expiresAt: now,
      decidedAt: now,
      completedAt: now,
      ...(idempotency && { idempotency: { ...idempotency, answer: () => paid } }),
    },
    function* (requestId) {
      yield* unchanged();
      yield* held({
        id: paymentId,
        allowanceId: from.allowanceId,
        delegationHash: from.state.hash,
        leafHash: leaf.leafHash,
        token: choice.asset,
        payee: choice.payee,
        amount: choice.amount,
        resource: required.resource.url,
        expiresAt: new Date(expiresAt * 1000),
        createdAt: now,
      });
      audited = yield* auditedIn([spent(requestId), ...(called ? [called(requestId)] : [])], clock);
    },
  );
  await audited!();
  return paid;
}

const PERSON_PAYS = "It waits for your approval; approved, your wallet pays it.";

/**
 * Why no live allowance of the grant paid the entry the person is asked to pay by one tap, in their words; `refused`
 * stands when the allowance covers its payee but not an amount that large and the person chose `refuse`.
 */
async function notCovered(
  agent: AgentContext,
  credentialId: string,
  payable: readonly Payable[],
  asked: Authorizable,
  refused: X402NotPayableError,
): Promise<string> {
  const names = await assetNames(asked.chainId, asked.asset);
  const covering = payable.find(
    (entry) =>
      entry.chainId === asked.chainId &&
      entry.token === asked.asset &&
      (entry.payees.includes(asked.payee) || entry.anyPayeeUpTo !== undefined),
  );
  if (covering?.anyPayeeUpTo !== undefined && asked.amount > covering.anyPayeeUpTo) {
    const allowance = await findAllowance(covering.allowanceId);
    if (allowance.overLimit !== "ask") throw refused;
    const units = (amount: bigint) => `${formatUnits(amount, names.decimals)} ${names.symbol}`;
    return `${units(asked.amount)} is above the ${units(covering.anyPayeeUpTo)} this allowance pays any payee at once.`;
  }
  if (covering) return "The resource takes no payment the allowance can sign (within an allowance Agent Wallet pays by erc7710).";
  if (await allowancePaused(agent.grantId, credentialId, asked.chainId))
    return "This wallet's allowance is paused until you review it on Clients.";
  return `No live allowance covers ${names.symbol} to ${asked.payee} here.`;
}

/**
 * The payment as the one tap an `approve` credential's is (one-tap.ts), saying why the allowance did not pay it; the
 * allowance's `refused` stands when no entry can be paid by one tap either. Asked outside the allowance's lease: the
 * person's payment comes from the wallet, not from the allowance, and what its payments hold does not bear on it.
 */
async function toPerson(
  { agent, credential, clock, idempotency }: Omit<Payer, "unchanged">,
  required: PaymentRequired,
  refused: AppError,
  why: (asked: Authorizable) => Promise<string>,
): Promise<ToolOutput<"pay_x402">> {
  const credentialId = credential.id;
  let asked: Authorizable;
  try {
    asked = await oneTapChoice(required, payerOf(agent, credentialId));
  } catch (error) {
    if (error instanceof X402NotPayableError) throw refused;
    throw error;
  }
  return payWithOneTap(agent, credentialId, required, clock, { choice: asked, reason: `${await why(asked)} ${PERSON_PAYS}` }, idempotency);
}

/**
 * pay_x402: the payment value for `given` (a PAYMENT-REQUIRED header value or a V1 402 body), or why not. Within an
 * allowance it is signed at once; an `approve` credential's payment, and an `allowance` credential's that its
 * allowance does not pay (not covered, stopped, or above it when the person chose `ask`), wait for the person's one
 * tap (one-tap.ts). `called`: the tool call's audit event, recorded with the payment's when it is signed at once;
 * `idempotency`: its key, stored with the payment's request, whichever way it is paid.
 */
export async function payX402(
  agent: AgentContext,
  credentialId: string,
  given: unknown,
  clock: Clock = systemClock,
  { called, idempotency, funded }: AgentCall & { funded?: RequestRow } = {},
): Promise<PaidX402 | ToolOutput<"pay_x402">> {
  const entry = grantedForPayments(agent, credentialId);
  const required = await readableAssets(
    parsePaymentRequired(given),
    config().chains.map((chain) => chain.id),
  );
  if (entry.mode !== "allowance") return payWithOneTap(agent, credentialId, required, clock, undefined, idempotency);
  const payer = { agent, credential: { id: credentialId, name: entry.name }, clock, called, idempotency, funded };
  return withinAllowance(payer, required, await liveAllowances(agent.grantId, credentialId, clock()));
}

/**
 * The cheapest entry payable within an allowance: an erc7710 one by a leaf of the delegate key, any other (eip3009, a
 * stock merchant's) from the agent's account (account.ts); or a refusal saying why each entry cannot be paid.
 */
function chooseWithin(required: PaymentRequired, payable: readonly Payable[]): Choice | AccountChoice {
  const configured = config().chains.map((chain) => chain.id);
  return cheapest<Choice | AccountChoice>(
    required.accepts.map((offer) =>
      offer.extra.assetTransferMethod === "erc7710" ? judgeOffer(offer, configured, payable) : judgeForAccount(offer, configured, payable),
    ),
  );
}

/** A refusal that a fresh read of the grant's allowances could decide otherwise (a policy's would not: it is not asked again). */
const decidedByTheAllowance = (error: unknown) => error instanceof X402AllowanceRefusal || error instanceof GrantRevokedError;

/**
 * The payment from the grant's live allowances, or the person's one tap for it. A payment chosen from a remembered read
 * of them that is refused, or sent to the person, is asked again from a fresh one (lib/allowances/live.ts), as one
 * whose chosen allowance changed before its transaction is.
 */
async function withinAllowance(
  payer: Omit<Payer, "unchanged">,
  required: PaymentRequired,
  live: LiveAllowances,
): Promise<PaidX402 | ToolOutput<"pay_x402">> {
  const { agent, credential, clock } = payer;
  const again = async () => withinAllowance(payer, required, await liveAllowances(agent.grantId, credential.id, clock(), { fresh: true }));
  const delegations = delegationsOf(live);
  const payable = payablesOf(delegations);
  let chosen: Choice | AccountChoice;
  try {
    chosen = chooseWithin(required, payable);
  } catch (error) {
    if (!(error instanceof X402NotPayableError)) throw error;
    if (live.remembered) return again();
    return toPerson(payer, required, error, (asked) => notCovered(agent, credential.id, payable, asked, error));
  }
  const from = live.allowances.find((allowance) => allowance.id === chosen.allowanceId)!;
  // The agent holds this allowance's key: no leaf signed, no agent account funded (a remembered read asked again first).
  if (from.delegateKind === "agent") {
    if (live.remembered) return again();
    const moved = { token: chosen.asset, recipient: chosen.payee, amount: chosen.amount };
    const refusal = await agentHeldRefusal(from, moved, clock());
    const words = await refusalWordsOf(from, refusal, moved, clock());
    const refused = new X402AllowanceRefusal(`${words} Nothing was signed.`, null, refusal.overLimit === "ask" ? words : null);
    if (refused.forPerson === null) throw refused;
    return toPerson(payer, required, refused, async () => words);
  }
  if ("method" in chosen) {
    const paid = await payFromAgentAccount(payer, required, chosen);
    if (!("toPerson" in paid)) return paid;
    const words = paid.toPerson;
    return toPerson(payer, required, new X402NotPayableError(words), async () => words);
  }
  const choice = chosen;
  try {
    const paying = delegations.find((row) => row.hash === choice.delegationHash)!;
    return await signWithinAllowance({ ...payer, unchanged: () => live.unchanged(paying.allowanceId) }, required, choice, paying);
  } catch (error) {
    if (error instanceof AllowancesChanged || (live.remembered && decidedByTheAllowance(error))) return again();
    if (!(error instanceof X402AllowanceRefusal) || error.forPerson === null) throw error;
    const words = error.forPerson;
    return toPerson(payer, required, error, async () => words);
  }
}

/**
 * What a retry of pay_x402 with the first call's idempotency key answers: that call's answer, the same payment; for a
 * payment the person approves, with its header and value once they approved it (as get_request answers them).
 */
export async function earlierPayment(
  agent: AgentContext,
  row: RequestRow,
  signFunded: (funded: RequestRow) => Promise<ToolOutput<"pay_x402">>,
): Promise<ToolOutput<"pay_x402">> {
  // a payment from the agent's account whose first call has not signed it (account.ts): its funding holds the key.
  // Mined since, this retry signs it from what the funding moved; still on its way, it is not paid yet.
  if (row.toolAnswer === null && row.kind === "send_transaction") {
    const funding = await currentRequest(row);
    if (funding.status === "completed") return signFunded(funding);
    if (funding.status === "failed")
      throw new AppError(
        "payment_failed",
        "The first call with this idempotency key failed: nothing was paid. Give a new call a new key.",
        409,
      );
    throw new AppError("allowance_busy", "The first call with this idempotency key is still paying; try again shortly.", 409);
  }
  if (row.toolAnswer === null) throw new Error(`Request ${row.id} holds no pay_x402 answer`);
  const answer = JSON.parse(row.toolAnswer) as ToolOutput<"pay_x402">;
  if (answer.header !== null) return answer;
  const { payment } = await getRequest(agent, row.id);
  return payment ? { ...answer, header: payment.header, value: payment.value } : answer;
}
