// Stopping allowances here when what they serve ends — their client's access, their grant, their wallet — in the
// same transaction that ends it, on every path (the person, the client's own token revocation, a replayed token).
// The server refuses their spends from then on. After that transaction commits, the relayer sends the revocations the
// person signed with each allowance (lib/allowances/revocation.ts), so they are disabled on chain too with no one at
// a browser, and sends them again until the chain confirms them (resend.ts); allowances made before those existed
// stay live on chain until the person signs their disabling.
import type { AuditInput } from "@/lib/audit";
import type { Tx } from "@/lib/db";
import { EXPIRED_MARGIN_MS } from "./caveats";
import { AppError } from "@/lib/http/errors";
import type { EndsWithWallet } from "@/lib/wallet/credentials";
import type { Ended } from "@/lib/wallet/request-lifecycle";

/** What a stop did: the events to record with it, and the allowances whose revocation to send once it commits. */
export type Stopped = { events: AuditInput[]; allowanceIds: string[] };

/**
 * Marks the live allowances of `where` `revoking` inside `tx`; those long expired are `revoked` at once, since their
 * delegations can no longer be redeemed and a revocation would only cost the relayer gas.
 */
export async function stopAllowancesIn(
  tx: Tx,
  where: Ended | { grantId: string; credentialId: string; chainId: number },
  reason: string,
): Promise<Stopped> {
  const scope =
    "clientId" in where
      ? {
          grantId: {
            in: (await tx.grant.findMany({ where: { clientId: where.clientId, userId: where.userId }, select: { id: true } })).map(
              (grant) => grant.id,
            ),
          },
        }
      : where;
  const now = new Date();
  const live = { ...scope, status: { in: ["active", "suspended"] } };
  const ended = await tx.allowance.updateManyAndReturn({
    where: { ...live, expiresAt: { lt: new Date(now.getTime() - EXPIRED_MARGIN_MS) } },
    data: { status: "revoked", revokedAt: now },
  });
  const stopped = await tx.allowance.updateManyAndReturn({
    where: live,
    // their first send follows the commit: the resend waits its interval from now
    data: { status: "revoking", revocationSentAt: now },
  });
  return {
    events: [
      ...ended.map((allowance) => ({ allowance, expired: true })),
      ...stopped.map((allowance) => ({ allowance, expired: false })),
    ].map(({ allowance, expired }): AuditInput => ({
      type: "allowance.stopped",
      userId: allowance.userId,
      credentialId: allowance.credentialId,
      data: {
        allowanceId: allowance.id,
        chainId: allowance.chainId,
        reason,
        expired,
        revocationStored: allowance.revocationSignature !== null,
      },
    })),
    allowanceIds: stopped.map((allowance) => allowance.id),
  };
}

/**
 * Sends the stored revocations of `allowanceIds`. A failure is logged, by our own message or the error's name only (an
 * RPC's error may carry its URL), and leaves them `revoking`: the server sends them again later (resend.ts).
 */
export async function sendOrLog(allowanceIds: string[]): Promise<void> {
  try {
    // loaded here, not with the module: the OAuth endpoints that stop allowances need the chain code only then
    const { sendStoredRevocations } = await import("./revocation");
    await sendStoredRevocations(allowanceIds);
  } catch (error) {
    const why = error instanceof AppError ? error.message : (error as Error).name;
    console.error(`Sending the revocations of ${allowanceIds.join(", ")} failed: ${why}`);
  }
}

/** A removed wallet's allowances stop with it (lib/wallet/credentials.ts removeCredential), disabled on chain after. */
export const allowancesEndWithWallet: EndsWithWallet = async (tx, credentialId) => {
  const stopped = await stopAllowancesIn(tx, { credentialId }, "its wallet was removed");
  return { events: stopped.events, afterCommit: () => disableInBackground(stopped) };
};

/** Sends the stopped allowances' stored revocations without holding up the caller (an OAuth endpoint does not wait on the chain). */
export function disableInBackground(stopped: Stopped | null): void {
  if (stopped?.allowanceIds.length) void sendOrLog(stopped.allowanceIds);
}
