// Paying from an allowance with no tap: the payment is matched to one of the allowance's delegations, checked
// against what its enforcers say is left and against the account's code, and only then redeemed on-chain through the
// relayer, which rehearses it as it will be sent. Spends of one allowance take turns under a database lease, so each
// is checked against the chain as the previous one left it: of many concurrent spends near the cap exactly as many
// are sent as fit, and none that is sent reverts. One that reverts anyway suspends the allowance for the person.
// The transaction that records a spend before its send requires the allowance still active and its lease still the
// spend's: a revocation committed after the spend's checks, or a lease lost meanwhile, and nothing is sent.
import {
  concat,
  decodeFunctionData,
  encodeFunctionData,
  erc20Abi,
  formatUnits,
  getAddress,
  pad,
  toHex,
  type Address,
  type Hex,
} from "viem";
import { createExactExecutionTerms, createLimitedCallsTerms } from "@metamask/delegation-core";
import { DelegationManager } from "@metamask/delegation-abis";
import { auditedIn, type AuditInput } from "@/lib/audit";
import { randomId } from "@/lib/crypto";
import { selectRows } from "@/lib/db";
import { PreparedSelect } from "@/lib/db/prepared";
import {
  changesOf,
  requiring,
  rowsLater,
  unansweredAll,
  writeTogether,
  writing,
  type Query,
  type TransactionScript,
} from "@/lib/db/transaction-script";
import { ChainError, onChain } from "@/lib/wallet/chains";
import { AppError } from "@/lib/http/errors";
import {
  allowanceStatus,
  allowanceStatusIn,
  findAllowance,
  frameworkFor,
  storedDelegation,
  type Allowance,
  type AllowanceStatus,
} from "./allowances";
import { pays, randomSalt, type Delegation, type OverLimit } from "./caveats";
import { delegateAccount } from "./delegate-key";
import { delegationDigest, delegationHash, encodedDelegations } from "./delegation-encoding";
import type { Framework } from "@/lib/wallet/delegation-framework";
import { ATTENTION_WORDS, holdForPerson, runsDeleGator, type Attention } from "./guard";
import { heldPayments, heldPaymentsIn, leftFor, STATE_MOVED, STATE_MOVED_WHILE_ACTIVE, type Held, type Holds, type Left } from "./holds";
import { WouldRevertError } from "@/lib/wallet/reverts";
import { processWide } from "@/lib/runtime/process-wide";
import {
  minedRows,
  relay,
  RelayBudgetError,
  relayFate,
  RelayerLowError,
  relayerFor,
  relayerNamed,
  relayerOn,
  relayerTurnIn,
  settledValue,
  type RelayerTurn,
} from "./relay";
import { FeesTooHighError } from "./fees";
import { droppedRow } from "./relayer-ledger";
import { relayLimits } from "./settings";
import { freeLease, leaseTakenIn, withLease, type HeldLease } from "./lease";

/** DelegationManager's ModeCode for one call, reverting on failure (ERC-7579 "single, default"). */
const SINGLE_DEFAULT_MODE = `0x${"00".repeat(32)}` as Hex;

export type RefusalReason =
  | "not_active"
  | "suspended"
  | "expired"
  | "not_covered"
  | "below_minimum"
  | "recipient_not_allowed"
  | "over_cap"
  | "no_transfers_left"
  | "would_revert"
  | "relay_unavailable";

/** A spend the allowance does not cover; nothing was sent. `overLimit` says whether it may go to the person instead. */
export class AllowanceRefusal extends AppError {
  constructor(
    readonly reason: RefusalReason,
    message: string,
    readonly overLimit: OverLimit,
    readonly left?: { available: string; resetsAt: string; transfersLeft: number; token: Address | null; periodSeconds: number },
  ) {
    super("allowance_refused", message, 409);
  }
}

/**
 * A payment from an allowance whose delegate key the agent holds (delegateKind "agent", decision 0042): the chain accepts
 * a redelegation of it only signed by that key, so Agent Wallet signs, holds and sends nothing of it.
 */
export class AgentSignsError extends AppError {
  constructor() {
    super(
      "agent_signs_payments",
      "This allowance's key is held by the agent, which signs its own payments from it (Agent Wallet only relays what the " +
        "agent signed), so Agent Wallet cannot pay from it. Nothing was held, signed or sent. Sign it with that key: a " +
        "transfer with prepare_allowance_payment, then send_allowance_payment (the SDK's payFromAllowance); an x402 " +
        "payment with the SDK's payingFetch and its ownKey.",
      409,
    );
  }
}

/** What is left of an allowance for a payment of `token`, as a refusal says it. */
export function leftOf(found: Left, token: Address | null): NonNullable<AllowanceRefusal["left"]> {
  return {
    available: found.available.toString(),
    resetsAt: new Date(found.state.resetsAt * 1000).toISOString(),
    transfersLeft: found.callsLeft,
    token,
    periodSeconds: found.state.meaning.periodSeconds,
  };
}

export type Payment = { to: Address; value: bigint; data?: Hex };

/** What a payment moves: the coin to a recipient, or a token's transfer(recipient, amount). */
export function paymentOf(payment: Payment): { token: Address | null; recipient: Address; amount: bigint } | null {
  const data = payment.data ?? "0x";
  if (data === "0x") return { token: null, recipient: getAddress(payment.to), amount: payment.value };
  if (payment.value !== 0n) return null;
  try {
    const call = decodeFunctionData({ abi: erc20Abi, data });
    if (call.functionName !== "transfer") return null;
    const [recipient, amount] = call.args;
    return { token: getAddress(payment.to), recipient: getAddress(recipient), amount };
  } catch {
    return null;
  }
}

/** Of the allowance's delegations of a payment's asset, the one that pays `recipient` (the one `under`, when named). */
export function payingDelegation(
  framework: Framework,
  candidates: Allowance["delegations"],
  recipient: Address,
  under?: Hex,
): Allowance["delegations"][number] | undefined {
  return candidates.find(
    (row) => (!under || row.hash.toLowerCase() === under.toLowerCase()) && pays(storedDelegation(framework, row).meaning, recipient),
  );
}

/**
 * The delegate's one-shot, exact redelegation of this execution to the relayer, who redeems it and pays the gas: it
 * allows that one call once, and only the relayer can redeem it.
 */
export async function redelegation(
  framework: Framework,
  chainId: number,
  rootHash: Hex,
  relayer: Address,
  execution: { target: Address; value: bigint; callData: Hex },
) {
  const delegate = await delegateAccount();
  const leaf: Delegation = {
    delegate: relayer,
    delegator: delegate.address,
    authority: rootHash,
    caveats: [
      { enforcer: framework.caveatEnforcers.ExactExecutionEnforcer, terms: createExactExecutionTerms({ execution }), args: "0x" },
      { enforcer: framework.caveatEnforcers.LimitedCallsEnforcer, terms: createLimitedCallsTerms({ limit: 1 }), args: "0x" },
    ],
    salt: randomSalt(),
    signature: "0x",
  };
  leaf.signature = await delegate.sign({ hash: delegationDigest(delegationHash(leaf), chainId, framework.DelegationManager) });
  return leaf;
}

/** The redeemDelegations call that performs `execution` through the chain leaf → person's delegation. */
export function redeemCall(chain: Delegation[], execution: { target: Address; value: bigint; callData: Hex }): Hex {
  const context = encodedDelegations(chain);
  const executionCalldata = concat([execution.target, pad(toHex(execution.value), { size: 32 }), execution.callData]);
  return encodeFunctionData({
    abi: DelegationManager,
    functionName: "redeemDelegations",
    args: [[context], [SINGLE_DEFAULT_MODE], [executionCalldata]],
  });
}

/**
 * A payment of this allowance was sent and the chain cannot say now whether it landed (the node does not answer), or
 * as many are in flight as an allowance sends before the first are mined: nothing was sent.
 */
class PendingSpendError extends AppError {
  constructor(hash: string | null, funds?: { balance: bigint; sending: bigint }) {
    super(
      "allowance_busy",
      hash
        ? `A payment from this allowance (transaction ${hash}) cannot be confirmed just now; try again shortly.`
        : funds
          ? `The account holds ${funds.balance} base units, of which payments not yet mined move ${funds.sending}: too little ` +
            "for this one too; try again once a block has come."
          : `${MAX_IN_FLIGHT} payments from this allowance are waiting to be mined; try again once a block has come.`,
      409,
    );
  }
}

/**
 * The most payments of one allowance sent and not yet mined: each counts against what is left until it is, and one
 * that reverts on chain (which suspends the allowance) may take at most this many others with it.
 */
const MAX_IN_FLIGHT = 24;

/** A spend sent and not yet seen mined, as read under its allowance's lease. */
type SentSpend = { id: string; txHash: string | null; delegationHash: string; amount: string };

const SENT_SPENDS = new PreparedSelect<SentSpend>(
  "allowance_sent_spends",
  `SELECT "id", "txHash", "delegationHash", "amount" FROM "AllowanceSpend" WHERE "allowanceId" = ? AND "status" = 'sent'`,
);

/** A spend sent and not yet seen mined of any of the person's allowances on the chain, its token '' for the coin. */
type PersonSending = SentSpend & { allowanceId: string; token: string };

/**
 * What a person's spends sent and not yet seen mined are, across their allowances on one chain: a payment's own
 * allowance's count as in flight against it, and those of its token take from the account's balance. One read for both.
 */
const PERSON_SENDING = new PreparedSelect<PersonSending>(
  "person_sending",
  `SELECT s."id", s."txHash", s."delegationHash", s."amount", s."allowanceId", COALESCE(s."token", '') AS "token"
    FROM "AllowanceSpend" s JOIN "Allowance" a ON a."id" = s."allowanceId"
    WHERE a."delegator" = ? AND a."chainId" = ? AND s."status" = 'sent'`,
);

/**
 * What the person's account holds of what a payment moves, as of the latest block: the rehearsal runs at the latest
 * block (a node builds its pending block from its whole pool for every read there), so it does not see the payments
 * sent and not yet mined, which the caller subtracts.
 */
function balanceOf(allowance: Allowance, token: Address | null): Promise<bigint> {
  const owner = getAddress(allowance.delegator);
  return onChain(allowance.chainId, (client) =>
    token
      ? client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [owner] })
      : client.getBalance({ address: owner }),
  );
}

/**
 * The spends this process sent and still waits to see mined: its own wait records their receipts, so another payment
 * of the allowance counts them as in flight without asking the chain (unless what is left does not fit without them),
 * and reconciliation (run from Next's copy of this module) leaves them to it.
 */
const waitingHere = processWide("spends-waited-here", () => new Set<string>());

// A payment's own rows are written past the ORM (lib/db queryPastOrm): through Prisma each statement cost about a
// millisecond of CPU, and every payment writes its spend and settles it.
const SPEND_SENT = `INSERT INTO "AllowanceSpend"
  ("id", "allowanceId", "delegationHash", "recipient", "token", "amount", "status", "txHash", "createdAt")
  VALUES (?, ?, ?, ?, ?, ?, 'sent', ?, ?)`;
const SPEND_STATUS = `UPDATE "AllowanceSpend" SET "status" = ? WHERE "id" = ?`;
/** The spend's outcome, written only by the first look at the chain that finds it: its sender's, or another's. */
const SPEND_SETTLED = `UPDATE "AllowanceSpend" SET "status" = ? WHERE "id" = ? AND "status" = 'sent'`;

/** A spend's outcome, with the allowance's version moved: what the chain holds of it changed (or stopped changing). */
const spendStatus = (allowanceId: string, spendId: string, status: "landed" | "failed") => [
  writing(SPEND_STATUS, status, spendId),
  writing(STATE_MOVED, allowanceId),
];

/**
 * Settles spends sent earlier and not yet seen mined (a slow chain, a process that stopped), and answers what those
 * still in flight hold against each delegation: what the enforcers say is left counts only mined payments. Those this
 * process waits for are counted as they are, unless `every`; the others are asked of the chain. One the node lost is
 * broadcast again while its nonce is free (relayFate); one whose nonce another transaction took fails, its ledger row
 * dropped, and its request follows (lib/wallet/request-lifecycle). A node that does not answer is no proof that a
 * payment is gone: the spend is refused (busy), never sent on a guess. `settled`: how many it settled.
 */
async function settleSent(
  allowanceId: string,
  chainId: number,
  sent: SentSpend[],
  every: boolean,
): Promise<{ settled: number; inFlight: Map<string, Held> }> {
  const inFlight = new Map<string, Held>();
  const count = (spend: SentSpend) => {
    const sum = inFlight.get(spend.delegationHash) ?? { amount: 0n, payments: 0 };
    inFlight.set(spend.delegationHash, { amount: sum.amount + BigInt(spend.amount), payments: sum.payments + 1 });
  };
  const fates = await Promise.all(
    sent.map(async (spend) => {
      if (!every && waitingHere.has(spend.id)) return "pending" as const;
      const hash = spend.txHash as Hex;
      try {
        return await relayFate(chainId, hash);
      } catch (error) {
        if (error instanceof ChainError) throw new PendingSpendError(hash);
        throw error;
      }
    }),
  );
  let settled = 0;
  for (const [index, spend] of sent.entries()) {
    const fate = fates[index];
    const hash = spend.txHash as Hex;
    if (fate === "pending") count(spend);
    // Mined, or never to be, while its sender still waits: its sender's wait records it (the chain, read after this,
    // counts it when mined).
    else if (waitingHere.has(spend.id)) continue;
    else if (fate === "replaced") {
      // It will never land, and nothing of it was spent.
      await writeTogether([droppedRow(hash), ...spendStatus(allowanceId, spend.id, "failed")]);
      settled++;
    } else {
      await writeTogether([...minedRows(fate), ...spendStatus(allowanceId, spend.id, fate.status === "success" ? "landed" : "failed")]);
      settled++;
      if (fate.status !== "success") await holdForPerson(allowanceId, "relay_reverted", { txHash: fate.transactionHash });
    }
  }
  return { settled, inFlight };
}

/**
 * The allowance's transfers sent and not yet seen mined, as what they hold against each delegation (`every`: each
 * asked of the chain), for leftFor's `inFlight`; those the chain has decided are settled on the way.
 */
export function inFlightOf(allowanceId: string, chainId: number, sent?: SentSpend[]) {
  let rows = sent;
  return async (every: boolean) => settleSent(allowanceId, chainId, (rows ??= await selectRows(SENT_SPENDS, allowanceId)), every);
}

/**
 * Settles the allowance's transfers sent and not yet seen mined that the chain has decided (or refuses, busy, while the
 * node does not answer). Answers how many it settled.
 */
export async function settleInFlight(allowanceId: string, chainId: number): Promise<number> {
  return (await inFlightOf(allowanceId, chainId)(true)).settled;
}

/** What an allowance's hold for the person means to the agent. */
function heldWords(attention: string | null): string {
  const why = ATTENTION_WORDS[attention as Attention];
  return `This allowance is paused until its owner reviews it on Clients${why ? `: ${why}` : ""}.`;
}

/**
 * A payment that was sent: `landed` once mined, `pending` when the chain had not shown it mined within a minute (it
 * stays `sent`, its amount held, until a later look at the chain settles it).
 */
export type SpendResult = {
  spendId: string;
  txHash: Hex;
  delegationHash: Hex;
  amount: string;
  token: Address | null;
  recipient: Address;
  outcome: "landed" | "pending";
};

/**
 * A payment's turn at its allowance, taken in the caller's transaction (spendTurnIn): the allowance's lease, and what
 * the payment reads first under it (the allowance's status, its transfers still in flight, its x402 holds), read in that
 * transaction; `held()` gives the holds (on SQLite read then, apart: heldPaymentsIn).
 */
export type SpendTurn = {
  lease: HeldLease;
  /** the chain's relayer's turn, taken with the allowance's lease when it was free */
  relayer: RelayerTurn | null;
  status: AllowanceStatus | undefined;
  /** the person's spends sent and not yet seen mined on the chain, this allowance's among them */
  sending: PersonSending[];
  held: () => Promise<Holds>;
};

/**
 * In the caller's transaction (the payment's request's): takes the allowance's lease when it is free, and the relayer's
 * turn with it (relayerTurnIn; `leafRelayer`, the one the agent's leaf names), and reads what spendFromAllowance reads
 * first under it, with no answer waited for. Once it has committed: the turn, or null when another spend holds the
 * lease (spendFromAllowance then waits for it).
 */
export function* spendTurnIn(
  allowance: Pick<Allowance, "id" | "chainId" | "userId" | "delegator">,
  leafRelayer?: Address,
): TransactionScript<() => SpendTurn | null> {
  const lease = yield* leaseTakenIn(`allowance:${allowance.id}`);
  const relayer = yield* relayerTurnIn(allowance.chainId, allowance.userId, lease.asked, leafRelayer);
  const status = yield* allowanceStatusIn(allowance.id);
  const sending = yield* rowsLater<PersonSending>(PERSON_SENDING.sql, allowance.delegator, allowance.chainId);
  const held = yield* heldPaymentsIn(allowance.id, new Date());
  return () => {
    const taken = lease.held();
    return taken && { lease: taken, relayer: relayer(), status: status(), sending: sending(), held };
  };
}

/** What the caller records of a payment sent or landed: its writes and audit events, committed with the spend's. */
export type SpendRecord = { writes: Query[]; events: AuditInput[] };

/**
 * Pays `payment` from the allowance (as its caller read it with its delegations, which never change, or its id), or
 * throws an AllowanceRefusal before anything is sent. `sent`: what the caller records of the payment's transaction,
 * written with the spend's row before it is broadcast (a process that stops after the send still knows it); `landed`:
 * what it records of a landed payment, written in the transaction that records its receipt, its events after the
 * payment's own.
 */
export async function spendFromAllowance(
  given: Allowance | string,
  payment: Payment,
  context: {
    clientId?: string;
    sent?: (txHash: Hex) => SpendRecord;
    landed?: (paid: SpendResult) => SpendRecord;
    turn?: SpendTurn | null;
    leaf?: Delegation;
  } = {},
): Promise<SpendResult> {
  const allowance = typeof given === "string" ? await findAllowance(given) : given;
  const allowanceId = allowance.id;
  const refuse = (reason: RefusalReason, message: string, left?: AllowanceRefusal["left"]) =>
    new AllowanceRefusal(reason, message, allowance.overLimit as OverLimit, left);
  const revoked = () => refuse("not_active", "This allowance has been revoked.");
  // Refused at once, before any wait: a revocation that is not yet confirmed stops spends here.
  const stillActive = (state: { status: string; attention: string | null } | undefined) => {
    if (state?.status === "suspended") throw refuse("suspended", heldWords(state.attention));
    if (state?.status !== "active") throw revoked();
  };
  const admitted = () => {
    // the server's delegate key is not the allowance's: a leaf it signed would not redeem, so the agent signs it
    if (allowance.delegateKind === "agent" && !context.leaf) throw new AgentSignsError();
    stillActive(allowance);
    if (allowance.expiresAt.getTime() <= Date.now()) throw refuse("expired", "This allowance has expired.");
    const moved = paymentOf(payment);
    if (!moved || moved.amount <= 0n)
      throw refuse("not_covered", "An allowance pays the chain's coin or a token's transfer(recipient, amount), nothing else.");
    // The relayer pays more gas than a payment this small is worth.
    const minimum = relayLimits().minimumNativePayment;
    if (!moved.token && moved.amount < minimum)
      throw refuse("below_minimum", `An allowance pays at least ${formatUnits(minimum, 18)} of the chain's coin at a time.`);
    relayerOn(allowance.chainId);
    return { moved, framework: frameworkFor(allowance.chainId) };
  };
  let admission;
  try {
    admission = admitted();
  } catch (error) {
    // the leases the caller took for this payment go with the refusal
    if (context.turn) await freeLease(context.turn.lease, ...(context.turn.relayer ? [context.turn.relayer.lease] : []));
    throw error;
  }
  const { moved, framework } = admission;
  // The relayer's turn, when the caller took it, is relay's once handed over; until then it is freed with a refusal.
  let relayerTurn = context.turn?.relayer ?? null;
  const handedOver = () => {
    const turn = relayerTurn;
    relayerTurn = null;
    return turn;
  };

  return withLease(
    `allowance:${allowanceId}`,
    async (lease) => {
      const turn = context.turn;
      stillActive(turn ? turn.status : await allowanceStatus(allowanceId));
      const candidates = allowance.delegations.filter((row) => (row.token ?? null) === moved.token);
      if (!candidates.length)
        throw refuse(
          "not_covered",
          moved.token ? `This allowance does not cover the token ${moved.token}.` : "This allowance does not cover the chain's coin.",
        );
      // The delegation that may pay this recipient: the leaf and the redemption are made before the chain is asked, so
      // that the relayer's rehearsal goes out with the checks below.
      // The agent's signed leaf is under the delegation it names.
      const paying = payingDelegation(framework, candidates, moved.recipient, context.leaf?.authority);
      if (!paying) throw refuse("recipient_not_allowed", `${moved.recipient} is not among this allowance's recipients.`);
      const root = storedDelegation(framework, paying).delegation;
      const execution = { target: getAddress(payment.to), value: payment.value, callData: payment.data ?? "0x" };
      // The relayer that sends it is the only one the one-time delegation lets redeem it.
      const relayer =
        relayerTurn?.relayer ??
        (context.leaf ? relayerNamed(allowance.chainId, context.leaf.delegate) : null) ??
        relayerFor(allowance.chainId);
      const leaf = context.leaf ?? (await redelegation(framework, allowance.chainId, paying.hash as Hex, relayer.address, execution));
      const data = redeemCall([leaf, root], execution);
      // What the database knows is read first; then one exchange with the node asks for the account's code, the receipts
      // of spends still in flight, what is left of the allowance, and the relayer's own reads and rehearsal (relay).
      const [sending, held] = await Promise.all([
        turn?.sending ?? selectRows(PERSON_SENDING, allowance.delegator, allowance.chainId),
        turn ? turn.held() : heldPayments(allowanceId, new Date()),
      ]);
      const inFlight = sending.filter((spend) => spend.allowanceId === allowanceId);
      // what the person's payments on their way take of the account's balance of this token
      const taken = sending.filter((spend) => spend.token === (moved.token ?? "")).reduce((sum, spend) => sum + BigInt(spend.amount), 0n);
      if (inFlight.length >= MAX_IN_FLIGHT) throw new PendingSpendError(null);
      let left: AllowanceRefusal["left"];
      const checks = async () => {
        const [deleGator, leftNow, balanceNow] = await Promise.allSettled([
          runsDeleGator(allowance.chainId, framework, getAddress(allowance.delegator)),
          // x402 payments signed and not yet redeemed, and transfers sent and not yet mined, hold their amounts
          leftFor(allowance, framework, moved, new Date(), { held, inFlight: inFlightOf(allowanceId, allowance.chainId, inFlight) }),
          balanceOf(allowance, moved.token),
        ]);
        // The relayer pays only for what the DeleGator decides: other code at the address could revert on chain alone.
        if (!settledValue(deleGator)) {
          await holdForPerson(allowanceId, "code_changed");
          throw refuse("suspended", heldWords("code_changed"));
        }
        const found = settledValue(leftNow);
        if (!found) throw refuse("recipient_not_allowed", `${moved.recipient} is not among this allowance's recipients.`);
        const { available } = found;
        left = leftOf(found, moved.token);
        if (left.transfersLeft < 1)
          throw refuse(
            "no_transfers_left",
            "This allowance has no payments left: its number of payments is counted over its whole life.",
            left,
          );
        if (moved.amount > available) {
          throw refuse(
            "over_cap",
            `This payment is above what is left of the allowance this period (${available} base units, until ${left.resetsAt}).`,
            left,
          );
        }
        const balance = settledValue(balanceNow);
        if (moved.amount > balance)
          throw refuse(
            "would_revert",
            `The chain would refuse this payment (the account holds ${balance} base units); nothing was sent.`,
            left,
          );
        // Enough now, not once the payments on their way are mined (or some of those were mined since the database said).
        if (moved.amount + taken > balance) throw new PendingSpendError(null, { balance, sending: taken });
      };

      const spendId = randomId("sp_");
      // counted as in flight by the allowance's next payments without asking the chain, until its receipt is recorded
      waitingHere.add(spendId);
      let sent;
      try {
        sent = await relay(
          allowance.chainId,
          // redemptions of one delegation need about the same gas: the last one's is tried first
          { to: framework.DelegationManager, data, kind: `redemption:${paying.hash}` },
          { purpose: "payment", userId: allowance.userId, allowanceId },
          {
            checks,
            turn: handedOver(),
            relayer,
            recordWith: (hash) => [
              writing(
                SPEND_SENT,
                spendId,
                allowanceId,
                paying.hash,
                moved.recipient,
                moved.token,
                moved.amount.toString(),
                hash,
                new Date(),
              ),
              ...(context.sent?.(hash).writes ?? []),
              // Still this spend's turn, and the allowance still active: another holder or a revocation since, and nothing is
              // sent. The lease first, as every transaction that takes it locks it before the allowance's row.
              lease.confirmed(),
              requiring(revoked, STATE_MOVED_WHILE_ACTIVE, allowanceId),
              // The allowance's next payment may start once this commits: it counts this one as in flight.
              lease.release(),
            ],
            auditWith: (hash) => context.sent?.(hash).events ?? [],
            recorded: lease.freed,
          },
        );
      } catch (error) {
        waitingHere.delete(spendId);
        if (error instanceof WouldRevertError)
          throw refuse("would_revert", `The chain would refuse this payment (${error.why}); nothing was sent.`, left);
        // The relayer will not pay for it now; the person still may, with their own gas.
        if (error instanceof RelayBudgetError || error instanceof RelayerLowError || error instanceof FeesTooHighError)
          throw refuse("relay_unavailable", error.message, left);
        throw error;
      }
      // The transaction named is the one of its nonce that may land, or landed (sent.hash: a replacement takes its place).
      const result = () => ({
        spendId,
        txHash: sent.hash,
        delegationHash: paying.hash as Hex,
        amount: moved.amount.toString(),
        token: moved.token,
        recipient: moved.recipient,
      });
      const spent = (landed: boolean): AuditInput => ({
        type: "allowance.spent",
        userId: allowance.userId,
        clientId: context.clientId ?? null,
        credentialId: allowance.credentialId,
        data: {
          allowanceId,
          txHash: sent.hash,
          outcome: landed ? "landed" : "reverted",
          recipient: moved.recipient,
          amount: moved.token ? `${moved.amount} of token ${moved.token}` : `${formatUnits(moved.amount, 18)} of the chain's coin`,
        },
      });
      // The receipt, the spend's outcome, the caller's record of a landed payment and the audit events of both: one
      // commit, made only when no other look at the chain settled the spend first (which records its request itself).
      let audited: (() => Promise<void>) | undefined;
      let receipt;
      try {
        receipt = await sent.receipt(function* (mined) {
          const landed = mined.status === "success";
          if (!(yield* changesOf(SPEND_SETTLED, landed ? "landed" : "failed", spendId))) return;
          const record = landed ? context.landed?.({ ...result(), outcome: "landed" }) : undefined;
          yield* unansweredAll([writing(STATE_MOVED, allowanceId), ...(record?.writes ?? [])]);
          audited = yield* auditedIn([spent(landed), ...(record?.events ?? [])]);
        });
      } catch (error) {
        // Not seen mined yet: it may still land, so its amount stays held and a later look at the chain settles it.
        if (error instanceof ChainError) return { ...result(), outcome: "pending" as const };
        throw error;
      } finally {
        waitingHere.delete(spendId);
      }
      await audited?.();
      if (receipt.status !== "success") {
        await holdForPerson(allowanceId, "relay_reverted", { txHash: sent.hash });
        throw new AppError(
          "payment_reverted",
          `The payment's transaction ${sent.hash} reverted on chain; nothing was paid. ${heldWords("relay_reverted")}`,
          502,
        );
      }
      return { ...result(), outcome: "landed" as const };
    },
    { taken: context.turn?.lease },
  ).finally(async () => {
    // a refusal before the send: the relayer's turn goes with the allowance's lease
    if (relayerTurn) await freeLease(relayerTurn.lease);
  });
}
