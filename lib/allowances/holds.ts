// Amounts held against an allowance by payments signed but not yet on chain: an x402 payment's one-time leaf
// (lib/x402) is redeemed by the payee's facilitator later, or never, so the enforcers' "left" does not count it yet.
// A hold is released once the chain shows the leaf redeemed (its ERC20TransferAmountEnforcer counted the transfer) or
// once the leaf has expired. Read under the allowance's lease, before the chain's "left": a payment settling in
// between is then counted twice (an early refusal), never missed.
import { ERC20TransferAmountEnforcer } from "@metamask/delegation-abis";
import { getAddress, type Address, type Hex } from "viem";
import { db, selectRows } from "@/lib/db";
import { PreparedSelect, storedTime } from "@/lib/db/prepared";
import { ChainError, onChain } from "@/lib/wallet/chains";
import type { Framework } from "@/lib/wallet/delegation-framework";
import { delegationState, type Allowance, type DelegationState } from "./allowances";
import { pays } from "./caveats";

/** A leaf's expiry is read by the chain's clock, which may run behind ours: its hold outlives it by this much. */
const EXPIRY_MARGIN_MS = 60_000;

export type Held = { amount: bigint; payments: number };

/** An unsettled payment's row: what it holds, against which delegation, until when. */
export type HeldPayment = { id: string; delegationHash: string; leafHash: string; amount: string; expiresAt: Date | string };

/** Read on every payment from the allowance, x402 or not: past the ORM (lib/db/prepared.ts). */
const HELD_PAYMENTS = new PreparedSelect<HeldPayment>(
  "allowance_held_payments",
  `SELECT "id", "delegationHash", "leafHash", "amount", "expiresAt" FROM "X402Payment" WHERE "allowanceId" = ? AND "status" = 'held'`,
);

/** The allowance's unsettled payments, as the database has them: read before the chain is asked what is left. */
export function heldPayments(allowanceId: string): Promise<HeldPayment[]> {
  return selectRows(HELD_PAYMENTS, allowanceId);
}

/**
 * What unsettled, unexpired payments hold against each of the allowance's delegations (by hash). Holds past their
 * expiry are released (the chain says whether each was redeemed first: settled or expired); the chain is asked of the
 * others only with `settled` — a caller asks again so when what is held refuses a payment, so that the common payment
 * costs no chain read per hold, and its chain reads go out with the caller's. A chain that does not answer releases
 * nothing.
 */
async function heldAgainst(
  held: HeldPayment[],
  chainId: number,
  framework: Framework,
  now: Date,
  options: { settled?: boolean } = {},
): Promise<Map<string, Held>> {
  const enforcer = framework.paymentEnforcers?.ERC20TransferAmountEnforcer;
  const expired = (hold: HeldPayment) => storedTime(hold.expiresAt).getTime() + EXPIRY_MARGIN_MS < now.getTime();
  const asked = held.filter((hold) => enforcer && (expired(hold) || options.settled));
  const spentOf = new Map<string, bigint | null>();
  if (asked.length && enforcer) {
    const answers = await Promise.all(
      asked.map((hold) =>
        onChain(chainId, (client) =>
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
    );
    asked.forEach((hold, index) => spentOf.set(hold.id, answers[index]));
  }
  const holding = new Map<string, Held>();
  for (const hold of held) {
    const spent = spentOf.get(hold.id) ?? null;
    const settled = spent !== null && spent >= BigInt(hold.amount);
    if (settled || (expired(hold) && spent !== null)) {
      await db().x402Payment.update({ where: { id: hold.id }, data: { status: settled ? "settled" : "expired" } });
      continue;
    }
    const sum = holding.get(hold.delegationHash) ?? { amount: 0n, payments: 0 };
    holding.set(hold.delegationHash, { amount: sum.amount + BigInt(hold.amount), payments: sum.payments + 1 });
  }
  return holding;
}

/** What is left of the delegation that pays a payment, once what signed payments hold is counted. */
export type Left = { state: DelegationState; available: bigint; callsLeft: number };

/**
 * What is left of the allowance's delegation for `payment`'s token that may pay its recipient (null: none may), with
 * the holds counted (`held`: as the caller read them, heldPayments). Holds are read before the chain, and the holds
 * the chain is asked about before what is left: a payment redeemed in between counts twice (an early refusal), never
 * not at all. When the payment does not fit, the holds the chain has settled are released and both read again.
 */
export async function leftFor(
  allowance: Allowance,
  framework: Framework,
  payment: { token: Address | null; recipient: Address; amount: bigint },
  now: Date,
  held?: HeldPayment[],
): Promise<Left | null> {
  const rows = allowance.delegations.filter((row) => (row.token ? getAddress(row.token) : null) === payment.token);
  const read = async (given: HeldPayment[], settled: boolean): Promise<Left | null> => {
    const holds = await heldAgainst(given, allowance.chainId, framework, now, { settled });
    const states = await Promise.all(rows.map((row) => delegationState(allowance.chainId, framework, row)));
    const state = states.find((candidate) => pays(candidate.meaning, payment.recipient));
    if (!state) return null;
    const hold = holds.get(state.hash) ?? { amount: 0n, payments: 0 };
    return {
      state,
      available: state.available > hold.amount ? state.available - hold.amount : 0n,
      callsLeft: Math.max(state.callsLeft - hold.payments, 0),
    };
  };
  const first = await read(held ?? (await heldPayments(allowance.id)), false);
  if (!first || (first.callsLeft >= 1 && payment.amount <= first.available)) return first;
  return read(await heldPayments(allowance.id), true);
}
