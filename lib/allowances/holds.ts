// Amounts held against an allowance by payments signed but not yet on chain: an x402 payment's one-time leaf
// (lib/x402) is redeemed by the payee's facilitator later, or never, so the enforcers' "left" does not count it yet.
// A hold is released once the chain shows the leaf redeemed (its ERC20TransferAmountEnforcer counted the transfer) or
// once the leaf has expired. Read under the allowance's lease, before the chain's "left": a payment settling in
// between is then counted twice (an early refusal), never missed.
import { ERC20TransferAmountEnforcer } from "@metamask/delegation-abis";
import { LRUCache } from "lru-cache";
import { getAddress, type Address, type Hex } from "viem";
import { selectRows, usesPostgres } from "@/lib/db";
import { PreparedSelect, sqliteDateTime, storedTime } from "@/lib/db/prepared";
import { required, rowsLater, unansweredAll, writeTogether, writing, type TransactionScript } from "@/lib/db/transaction-script";
import { ChainError, onChain } from "@/lib/wallet/chains";
import type { Framework } from "@/lib/wallet/delegation-framework";
import { delegationState, type Allowance, type DelegationState } from "./allowances";
import { pays } from "./caveats";
import { leaseInTransaction, type LeaseHolding } from "./lease";

/** A leaf's expiry is read by the chain's clock, which may run behind ours: its hold outlives it by this much. */
const EXPIRY_MARGIN_MS = 60_000;

export type Held = { amount: bigint; payments: number };

/** An unsettled payment's row: what it holds, against which delegation, until when. */
export type HeldPayment = { id: string; delegationHash: string; leafHash: string; amount: string; expiresAt: Date | string };

// Read on every payment from the allowance, x402 or not, past the ORM (lib/db/prepared.ts). The live holds are summed
// by the database: an agent paying often holds many at once (each until its leaf expires, unless a refused payment
// finds it settled), and reading them row by row grew with their number. SQLite sums exactly while every amount fits
// 64 bits (18 digits) and the sum does (otherwise it raises an error): past that the rows are read and summed here.
type HeldTotal = { delegationHash: string; expired: number | string; payments: number | string; amount: string; digits: number | string };
const HELD_TOTALS = new PreparedSelect<HeldTotal>(
  "allowance_held_totals",
  `SELECT "delegationHash", CASE WHEN "expiresAt" < ? THEN 1 ELSE 0 END AS "expired", COUNT(*) AS "payments",
    CAST(SUM(CAST("amount" AS NUMERIC)) AS TEXT) AS "amount", MAX(LENGTH("amount")) AS "digits"
  FROM "X402Payment" WHERE "allowanceId" = ? AND "status" = 'held' GROUP BY 1, 2`,
);
const HELD_PAYMENTS = new PreparedSelect<HeldPayment>(
  "allowance_held_payments",
  `SELECT "id", "delegationHash", "leafHash", "amount", "expiresAt" FROM "X402Payment" WHERE "allowanceId" = ? AND "status" = 'held'`,
);
const EXPIRED_HOLDS = new PreparedSelect<HeldPayment>(
  "allowance_expired_holds",
  `SELECT "id", "delegationHash", "leafHash", "amount", "expiresAt" FROM "X402Payment"
  WHERE "allowanceId" = ? AND "status" = 'held' AND "expiresAt" < ?`,
);

/**
 * Bumps the allowance's `stateVersion`: written with every change this service makes to what the chain holds of the
 * allowance (a transfer sent or mined, a held payment found redeemed), under the allowance's lease.
 */
export const STATE_MOVED = `UPDATE "Allowance" SET "stateVersion" = "stateVersion" + 1 WHERE "id" = ?`;
/**
 * STATE_MOVED by a payment about to be sent, which the allowance must still be `active` for (a row, required): a
 * revocation committed before it refuses it, and one asked meanwhile waits for its row (on PostgreSQL) until it commits.
 */
export const STATE_MOVED_WHILE_ACTIVE = `${STATE_MOVED} AND "status" = 'active' RETURNING "id"`;
const PAYMENT_STATUS = `UPDATE "X402Payment" SET "status" = ? WHERE "id" = ?`;

// What the enforcers said of each delegation, at the allowance's stateVersion then: an x402 payment asks for them on
// every payment, and the chain's answer stands while the version has not moved. A facilitator's redemption of a held
// payment, the one change no one tells this service of, is counted by its hold until a payment finds it redeemed
// (which releases the hold and bumps the version, in one transaction). Never kept past the period's end (the chain
// then resets it) nor STATE_TTL_MS: what happens behind the service's back (the delegate key used elsewhere, the
// delegation disabled on chain) is seen within that, and the chain refuses it meanwhile anyway.
const STATE_TTL_MS = 30_000;
const knownStates = new LRUCache<string, { version: number; state: DelegationState; readAt: number }>({ max: 10_000 });

/**
 * What the chain said of a delegation, and the allowance's `version` it was asked at, while that answer stands: it
 * stands for the allowance only while the allowance is still at that version (holdAtOnce requires it).
 */
export function keptState(chainId: number, hash: string, now: Date): { state: DelegationState; version: number } | undefined {
  const known = knownStates.get(`${chainId}:${hash}`);
  if (!known) return undefined;
  // an age below zero: the clock went back since, and the age is unknown
  const age = now.getTime() - known.readAt;
  return now.getTime() < known.state.resetsAt * 1000 && age >= 0 && age < STATE_TTL_MS ? known : undefined;
}

/** A delegation's state: as known at `version` when it still stands, else read from the chain (and kept at `version`). */
async function stateAt(
  chainId: number,
  framework: Framework,
  row: { hash: string; signed: string },
  version: number | undefined,
  now: Date,
): Promise<DelegationState> {
  const known = version === undefined ? undefined : keptState(chainId, row.hash, now);
  if (known && known.version === version) return known.state;
  const state = await delegationState(chainId, framework, row);
  if (version !== undefined) knownStates.set(`${chainId}:${row.hash}`, { version, state, readAt: now.getTime() });
  return state;
}

/** What the allowance's unsettled payments hold: live ones summed per delegation, and the rows the chain is asked about. */
export type Holds = { totals: Map<string, Held>; rows: HeldPayment[] };

const expired = (hold: HeldPayment, now: Date) => storedTime(hold.expiresAt).getTime() + EXPIRY_MARGIN_MS < now.getTime();

/** Holds read as rows, summed here: the chain is asked only about those past their expiry. */
function summed(rows: HeldPayment[], now: Date): Holds {
  const held: Holds = { totals: new Map(), rows: rows.filter((hold) => expired(hold, now)) };
  for (const hold of rows) if (!expired(hold, now)) add(held.totals, hold);
  return held;
}

function add(totals: Map<string, Held>, hold: HeldPayment) {
  const sum = totals.get(hold.delegationHash) ?? { amount: 0n, payments: 0 };
  totals.set(hold.delegationHash, { amount: sum.amount + BigInt(hold.amount), payments: sum.payments + 1 });
}

/** SQLite's integer overflow, of a sum past 64 bits. */
const sumOverflowed = (error: unknown) => /overflow/i.test((error as Error).message);

/**
 * The allowance's unsettled payments as the database has them, read before the chain is asked what is left: the live
 * ones summed, and those past their expiry as rows (the chain says whether each was redeemed). `every`: every hold as
 * a row, each to be asked of the chain.
 */
export async function heldPayments(allowanceId: string, now: Date, options: { every?: boolean } = {}): Promise<Holds> {
  if (options.every) return { totals: new Map(), rows: await selectRows(HELD_PAYMENTS, allowanceId) };
  const since = sqliteDateTime(new Date(now.getTime() - EXPIRY_MARGIN_MS));
  let groups;
  try {
    groups = await selectRows(HELD_TOTALS, since, allowanceId);
  } catch (error) {
    if (!sumOverflowed(error)) throw error;
    return summed(await selectRows(HELD_PAYMENTS, allowanceId), now);
  }
  return holdsOf(groups, allowanceId, since, now);
}

/**
 * heldPayments in the caller's transaction: on PostgreSQL, where a sum never overflows, the holds' totals are read
 * there without waiting for the answer; SQLite's are read apart (a sum past 64 bits would fail the transaction).
 * Once the transaction has run, the answer gives the holds.
 */
export function* heldPaymentsIn(allowanceId: string, now: Date): TransactionScript<() => Promise<Holds>> {
  if (!usesPostgres()) return () => heldPayments(allowanceId, now);
  const since = sqliteDateTime(new Date(now.getTime() - EXPIRY_MARGIN_MS));
  const groups = yield* rowsLater<HeldTotal>(HELD_TOTALS.sql, since, allowanceId);
  return () => holdsOf(groups(), allowanceId, since, now);
}

/** The holds from their totals per delegation and expiry; those past their expiry, rarely any, read as rows. */
async function holdsOf(groups: HeldTotal[], allowanceId: string, since: string, now: Date): Promise<Holds> {
  const live = groups.filter((group) => Number(group.expired) === 0);
  if (!usesPostgres() && live.some((group) => Number(group.digits) > 18)) return summed(await selectRows(HELD_PAYMENTS, allowanceId), now);
  const held: Holds = { totals: new Map(), rows: live.length < groups.length ? await selectRows(EXPIRED_HOLDS, allowanceId, since) : [] };
  for (const group of live) held.totals.set(group.delegationHash, { amount: BigInt(group.amount), payments: Number(group.payments) });
  return held;
}

/**
 * What unsettled, unexpired payments hold against each of the allowance's delegations (by hash). Of the holds read
 * as rows, those past their expiry are released (the chain says whether each was redeemed first: settled or expired),
 * and the others too once the chain shows them settled; a chain that does not answer releases nothing. The rows'
 * chain reads go out with the caller's. `moved`: a payment was found redeemed (the allowance's version moved).
 */
async function heldAgainst(
  allowance: Allowance,
  held: Holds,
  framework: Framework,
  now: Date,
): Promise<{ holding: Map<string, Held>; moved: boolean }> {
  const enforcer = framework.paymentEnforcers?.ERC20TransferAmountEnforcer;
  const spent = enforcer
    ? await Promise.all(
        held.rows.map((hold) =>
          onChain(allowance.chainId, (client) =>
            client.readContract({
              address: enforcer,
              abi: ERC20TransferAmountEnforcer,
              functionName: "spentMap",
              args: [framework.DelegationManager, hold.leafHash as Hex],
            }),
          ).catch((error: unknown) => {
            if (error instanceof ChainError) return null;
            throw error;
          }),
        ),
      )
    : held.rows.map(() => null);
  const holding = new Map(held.totals);
  let moved = false;
  for (const [index, hold] of held.rows.entries()) {
    const redeemed = spent[index];
    const settled = redeemed !== null && redeemed >= BigInt(hold.amount);
    if (settled) {
      await writeTogether([writing(PAYMENT_STATUS, "settled", hold.id), writing(STATE_MOVED, allowance.id)]);
      moved = true;
    } else if (expired(hold, now) && redeemed !== null) await writeTogether([writing(PAYMENT_STATUS, "expired", hold.id)]);
    else add(holding, hold);
  }
  return { holding, moved };
}

/** What is left of the delegation that pays a payment, once what signed payments hold is counted. */
export type Left = { state: DelegationState; available: bigint; callsLeft: number };

/**
 * What the allowance's transfers sent and not yet mined hold against each delegation, read under its lease before the
 * chain (lib/allowances/spend.ts inFlightOf): `every`, each asked of the chain first; `settled`, how many it found
 * decided and settled (the allowance's version moved).
 */
export type InFlight = (every: boolean) => Promise<{ settled: number; inFlight: Map<string, Held> }>;

/**
 * What is left of the allowance's delegation for `payment`'s token that may pay its recipient (null: none may), with
 * the holds and the transfers in flight counted (`held`: as the caller read them, heldPayments). Both are read before
 * the chain, and the holds and transfers the chain is asked about before what is left: a payment redeemed or mined in
 * between counts twice (an early refusal), never not at all. When the payment does not fit, the holds and transfers
 * the chain has settled are released and all read again. `version`: the allowance's stateVersion as read under its
 * lease, when what the chain said at it may stand in for asking again (an x402 payment; a transfer asks the chain with
 * its own send).
 */
export async function leftFor(
  allowance: Allowance,
  framework: Framework,
  payment: { token: Address | null; recipient: Address; amount: bigint },
  now: Date,
  known: { held?: Holds; version?: number; inFlight?: InFlight } = {},
): Promise<Left | null> {
  const rows = allowance.delegations.filter((row) => (row.token ? getAddress(row.token) : null) === payment.token);
  const read = async (given: Holds, version: number | undefined, every: boolean): Promise<Left | null> => {
    const [{ holding, moved }, sent] = await Promise.all([
      heldAgainst(allowance, given, framework, now),
      known.inFlight?.(every) ?? { settled: 0, inFlight: new Map<string, Held>() },
    ]);
    const stale = moved || sent.settled > 0;
    const states = await Promise.all(rows.map((row) => stateAt(allowance.chainId, framework, row, stale ? undefined : version, now)));
    const state = states.find((candidate) => pays(candidate.meaning, payment.recipient));
    if (!state) return null;
    const signed = holding.get(state.hash) ?? { amount: 0n, payments: 0 };
    const sending = sent.inFlight.get(state.hash) ?? { amount: 0n, payments: 0 };
    const hold = { amount: signed.amount + sending.amount, payments: signed.payments + sending.payments };
    return {
      state,
      available: state.available > hold.amount ? state.available - hold.amount : 0n,
      callsLeft: Math.max(state.callsLeft - hold.payments, 0),
    };
  };
  const first = await read(known.held ?? (await heldPayments(allowance.id, now)), known.version, false);
  if (!first || (first.callsLeft >= 1 && payment.amount <= first.available)) return first;
  return read(await heldPayments(allowance.id, now, { every: true }), undefined, true);
}

/** An x402 payment's hold, written with its request (lib/x402). */
export type NewHold = {
  id: string;
  allowanceId: string;
  delegationHash: string;
  leafHash: string;
  token: Address;
  payee: Address;
  amount: bigint;
  resource: string;
  expiresAt: Date;
  createdAt: Date;
};

/**
 * The hold, written only while its allowance is `active` (it returns a row then). On PostgreSQL the allowance's row is
 * locked for share until the commit, so that a revocation asked meanwhile commits after the hold, never between its
 * check and its commit.
 */
const holdWhileActive = () => `INSERT INTO "X402Payment"
  ("id", "allowanceId", "delegationHash", "leafHash", "token", "payee", "amount", "resource", "status", "expiresAt", "createdAt")
  SELECT ?, ?, ?, ?, ?, ?, ?, ?, 'held', ?, ?
  WHERE EXISTS (SELECT 1 FROM "Allowance" WHERE "id" = ? AND "status" = 'active'${usesPostgres() ? " FOR SHARE" : ""})
  RETURNING "id"`;

/**
 * Writes the payment's hold in the caller's transaction, which is refused with `stopped()` when the allowance is no
 * longer active (a revocation committed since the payment read it): nothing is held, and the signed payment is not given.
 * `lease`: the allowance's lease the payment was judged under, confirmed in that transaction (a holder whose lease
 * lapsed and was taken over holds nothing: another payment may have been judged without this one).
 */
export function* hold(payment: NewHold, stopped: () => Error, lease?: LeaseHolding): TransactionScript<void> {
  const { id, allowanceId, delegationHash, leafHash, token, payee, amount, resource, expiresAt, createdAt } = payment;
  const held = [id, allowanceId, delegationHash, leafHash, token, payee, amount.toString(), resource, expiresAt, createdAt];
  yield* required(stopped, holdWhileActive(), ...held, allowanceId);
  if (lease) yield* unansweredAll([lease.confirmed()]);
}

/** A payment the kept answer of the chain cannot decide: it is judged again under the allowance's lease. */
class NotDecidedAtOnce extends Error {
  constructor() {
    super("decided under the allowance's lease");
  }
}

/** Whether holdAtOnce's transaction left the payment to be judged under the allowance's lease. */
export const decidedUnderLease = (error: unknown) => error instanceof NotDecidedAtOnce || sumOverflowed(error);

/**
 * The allowance unexpired at the version the chain was asked at, no transfer of it in flight (what the chain said does
 * not count one), and the delegation's live holds leaving room for the payment by that answer (its amount, what the
 * chain said is available and how many calls are left): a row, or none (the hold itself requires the allowance active).
 * On SQLite every amount is compared as a 64-bit integer, so the holds must fit in 18 digits each (heldPayments).
 */
const roomAtVersion = () => `SELECT 1 FROM "Allowance" a, (
    SELECT COUNT(*) AS "payments", COUNT(CASE WHEN "expiresAt" < ? THEN 1 END) AS "expired",
      COALESCE(SUM(CAST("amount" AS NUMERIC)), 0) AS "amount", COALESCE(MAX(LENGTH("amount")), 0) AS "digits"
    FROM "X402Payment" WHERE "allowanceId" = ? AND "status" = 'held' AND "delegationHash" = ?
  ) h
  WHERE a."id" = ? AND a."stateVersion" = ? AND a."expiresAt" > ? AND h."expired" = 0
    AND NOT EXISTS (SELECT 1 FROM "AllowanceSpend" WHERE "allowanceId" = a."id" AND "status" = 'sent')
    AND h."payments" < ? AND h."amount" + CAST(? AS NUMERIC) <= CAST(? AS NUMERIC)${usesPostgres() ? "" : ` AND h."digits" <= 18`}`;

/** Below this, SQLite compares an amount exactly (a 64-bit integer). */
const SQLITE_EXACT = 10n ** 18n;

/**
 * In the caller's transaction (the policy's), in place of the allowance's lease and the chain: holds `payment` when
 * `state`, what the chain said at the allowance's `version` (keptState), leaves room for it once the delegation's live
 * holds are counted, the allowance still being active at that version. The transaction runs only while no transfer or
 * payment holds the allowance's lease (leaseInTransaction), and one asking for it next waits for the commit and then
 * counts this hold. Otherwise (the lease held, the version moved, holds past their expiry that only the chain
 * can judge, or no room left by this answer) nothing is written and decidedUnderLease says so. The database judges
 * each condition itself: none waits for an answer (on PostgreSQL they go out with the transaction's last round trip).
 */
export function* holdAtOnce(payment: NewHold, state: DelegationState, version: number): TransactionScript<void> {
  const undecided = () => new NotDecidedAtOnce();
  if (!usesPostgres() && (state.available >= SQLITE_EXACT || payment.amount >= SQLITE_EXACT)) throw undecided();
  const giveBack = yield* leaseInTransaction(`allowance:${payment.allowanceId}`, undecided);
  const since = new Date(payment.createdAt.getTime() - EXPIRY_MARGIN_MS);
  yield* required(
    undecided,
    roomAtVersion(),
    since,
    payment.allowanceId,
    state.hash,
    payment.allowanceId,
    version,
    payment.createdAt,
    state.callsLeft,
    payment.amount.toString(),
    state.available.toString(),
  );
  yield* hold(payment, undecided);
  yield* giveBack();
}
