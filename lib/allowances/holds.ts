// Amounts held against an allowance by payments signed but not yet on chain: an x402 payment's one-time leaf
// (lib/x402) is redeemed by the payee's facilitator later, or never, so the enforcers' "left" does not count it yet.
// A hold is released once the chain shows the leaf redeemed (its ERC20TransferAmountEnforcer counted the transfer) or
// once the leaf has expired. Read under the allowance's lease, before the chain's "left": a payment settling in
// between is then counted twice (an early refusal), never missed.
import { ERC20TransferAmountEnforcer } from "@metamask/delegation-abis";
import type { Hex } from "viem";
import { db, selectRows } from "@/lib/db";
import { PreparedSelect, storedTime } from "@/lib/db/prepared";
import { ChainError, onChain } from "@/lib/wallet/chains";
import type { Framework } from "@/lib/wallet/delegation-framework";

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
 * What unsettled, unexpired payments hold against each of the allowance's delegations (by hash), after releasing the
 * holds the chain has settled or that expired. A chain that does not answer releases nothing.
 */
export async function heldAgainst(allowanceId: string, chainId: number, framework: Framework, now: Date): Promise<Map<string, Held>> {
  const held = await selectRows(HELD_PAYMENTS, allowanceId);
  const enforcer = framework.paymentEnforcers?.ERC20TransferAmountEnforcer;
  const holding = new Map<string, Held>();
  for (const hold of held) {
    let spent: bigint | null = null;
    if (enforcer) {
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
    const expired = spent !== null && storedTime(hold.expiresAt).getTime() + EXPIRY_MARGIN_MS < now.getTime();
    if (settled || expired) {
      await db().x402Payment.update({ where: { id: hold.id }, data: { status: settled ? "settled" : "expired" } });
      continue;
    }
    const sum = holding.get(hold.delegationHash) ?? { amount: 0n, payments: 0 };
    holding.set(hold.delegationHash, { amount: sum.amount + BigInt(hold.amount), payments: sum.payments + 1 });
  }
  return holding;
}
