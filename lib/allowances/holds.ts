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

/** Read on every payment from the allowance, x402 or not: past the ORM (lib/db/prepared.ts). */
const HELD_PAYMENTS = new PreparedSelect<{
  id: string;
  delegationHash: string;
  leafHash: string;
  amount: string;
  expiresAt: Date | string;
}>(
  "allowance_held_payments",
  `SELECT "id", "delegationHash", "leafHash", "amount", "expiresAt" FROM "X402Payment" WHERE "allowanceId" = ? AND "status" = 'held'`,
);

/**
 * What unsettled, unexpired payments hold against each of the allowance's delegations (by hash). Holds past their
 * expiry are released (the chain says whether each was redeemed first: settled or expired); the chain is asked of the
 * others only with `settled` — a caller asks again so when what is held refuses a payment, so that the common payment
 * costs no chain read per hold. A chain that does not answer releases nothing.
 */
async function heldAgainst(
  allowanceId: string,
  chainId: number,
  framework: Framework,
  now: Date,
  options: { settled?: boolean } = {},
): Promise<Map<string, Held>> {
  const held = await selectRows(HELD_PAYMENTS, allowanceId);
  const enforcer = framework.paymentEnforcers?.ERC20TransferAmountEnforcer;
  const holding = new Map<string, Held>();
  for (const hold of held) {
    const expired = storedTime(hold.expiresAt).getTime() + EXPIRY_MARGIN_MS < now.getTime();
    let spent: bigint | null = null;
    if (enforcer && (expired || options.settled)) {
      try {
        spent = await onChain(chainId, (client) =>
          client.readContract({
            address: enforcer,
            abi: ERC20TransferAmountEnforcer,
            functionName: "spentMap",
            args: [framework.DelegationManager, hold.leafHash as Hex],
          }),
        );
      } catch (error) {
        if (!(error instanceof ChainError)) throw error;
      }
    }
    const settled = spent !== null && spent >= BigInt(hold.amount);
    if (settled || (expired && spent !== null)) {
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
 * the holds counted. Holds are read before the chain: a payment redeemed in between counts twice (an early refusal),
 * never not at all. When the payment does not fit, the holds the chain has settled are released and both read again.
 */
export async function leftFor(
  allowance: Allowance,
  framework: Framework,
  payment: { token: Address | null; recipient: Address; amount: bigint },
  now: Date,
): Promise<Left | null> {
  const rows = allowance.delegations.filter((row) => (row.token ? getAddress(row.token) : null) === payment.token);
  const read = async (settled: boolean): Promise<Left | null> => {
    const holds = await heldAgainst(allowance.id, allowance.chainId, framework, now, { settled });
    const states = await Promise.all(rows.map((row) => delegationState(allowance.chainId, framework, row)));
    const state = states.find((candidate) => pays(candidate.meaning, payment.recipient));
    if (!state) return null;
    const held = holds.get(state.hash) ?? { amount: 0n, payments: 0 };
    return {
      state,
      available: state.available > held.amount ? state.available - held.amount : 0n,
      callsLeft: Math.max(state.callsLeft - held.payments, 0),
    };
  };
  const first = await read(false);
  if (!first || (first.callsLeft >= 1 && payment.amount <= first.available)) return first;
  return read(true);
}
