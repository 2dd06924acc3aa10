// What the relayer checks of a person's account before it pays for anything the account's code decides: the address
// must still run this chain's DeleGator (EIP-7702 lets its owner point it at other code at any time, code that may
// behave one way in a simulation and another on chain). An allowance whose account changed its code, or whose relayed
// transaction reverted anyway, waits for the person: `suspended` (it pays nothing) until they resume it on /clients,
// or, while it is being revoked, not sent again.
import type { Address, Hex } from "viem";
import { recordAudit } from "@/lib/audit";
import { db } from "@/lib/db";
import { onChain } from "@/lib/wallet/chains";
import type { Framework } from "@/lib/wallet/delegation-framework";

/** Why an allowance waits for the person. */
export type Attention = "code_changed" | "relay_reverted" | "revocation_refused" | "revocation_reverted";

export const ATTENTION_WORDS: Record<Attention, string> = {
  code_changed: "its wallet's address now runs other code than the DeleGator the allowance was made for",
  relay_reverted: "a transaction the relayer sent for it reverted on chain",
  revocation_refused: "the chain would refuse the revocation signed with it (one of its delegations may be disabled already)",
  revocation_reverted: "a revocation the relayer paid for was refused on chain, and the relayer pays for no other",
};

/** Code at an address that EIP-7702 delegated to `implementation`. */
export function delegatedCode(implementation: Address): Hex {
  return `0xef0100${implementation.slice(2).toLowerCase()}`;
}

/** Whether `account` runs exactly this chain's DeleGator now. */
export async function runsDeleGator(chainId: number, framework: Framework, account: Address): Promise<boolean> {
  const code = await onChain(chainId, (client) => client.getCode({ address: account }));
  return (code ?? "0x").toLowerCase() === delegatedCode(framework.implementations.EIP7702StatelessDeleGatorImpl);
}

/**
 * Puts the allowance in the person's hands: an active one is suspended, a revoking one is not sent again. Recorded
 * once, by whichever caller's update took.
 */
export async function holdForPerson(allowanceId: string, attention: Attention, detail: Record<string, unknown> = {}): Promise<void> {
  const allowance = await db().allowance.findUnique({ where: { id: allowanceId } });
  if (!allowance || allowance.attention) return;
  const { count } = await db().allowance.updateMany({
    where: { id: allowanceId, attention: null, status: { in: ["active", "revoking"] } },
    data: { attention, ...(allowance.status === "active" ? { status: "suspended" } : {}) },
  });
  if (!count) return;
  await recordAudit({
    type: "allowance.suspended",
    userId: allowance.userId,
    credentialId: allowance.credentialId,
    data: { allowanceId, chainId: allowance.chainId, attention, revoking: allowance.status === "revoking", ...detail },
  });
}
