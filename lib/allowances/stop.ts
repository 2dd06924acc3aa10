// Stopping allowances here when what they serve ends — their client's access, their grant, their wallet — in the
// same transaction that ends it, on every path (the person, the client's own token revocation, a replayed token).
// The server refuses their spends from then on. After that transaction commits, the relayer sends the revocations the
// person signed with each allowance (lib/allowances/revocation.ts), so they are disabled on chain too with no one at
// a browser; allowances made before those existed stay live on chain until the person signs their disabling.
import type { AuditInput } from "@/lib/audit";
import type { Tx } from "@/lib/db";
import { AppError } from "@/lib/http/errors";
import type { Ended } from "@/lib/wallet/request-lifecycle";

/** What a stop did: the events to record with it, and the allowances whose revocation to send once it commits. */
export type Stopped = { events: AuditInput[]; allowanceIds: string[] };

/** Marks the live allowances of `where` `revoking` inside `tx`. */
export async function stopAllowancesIn(tx: Tx, where: Ended, reason: string): Promise<Stopped> {
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
  const stopped = await tx.allowance.updateManyAndReturn({ where: { ...scope, status: "active" }, data: { status: "revoking" } });
  return {
    events: stopped.map((allowance) => ({
      type: "allowance.stopped",
      userId: allowance.userId,
      credentialId: allowance.credentialId,
      data: { allowanceId: allowance.id, chainId: allowance.chainId, reason },
    })),
    allowanceIds: stopped.map((allowance) => allowance.id),
  };
}

/**
 * Sends the stopped allowances' stored revocations without holding up the caller (an OAuth endpoint does not wait on
 * the chain). A failure is logged, by our own message or the error's name only (an RPC's error may carry its URL),
 * and leaves them `revoking`: /clients offers to send again.
 */
export function disableInBackground(stopped: Stopped | null): void {
  if (!stopped?.allowanceIds.length) return;
  // loaded here, not with the module: the OAuth endpoints that stop allowances need the chain code only then
  void import("./revocation")
    .then(({ sendStoredRevocations }) => sendStoredRevocations(stopped.allowanceIds))
    .catch((error: unknown) => {
      const why = error instanceof AppError ? error.message : (error as Error).name;
      console.error(`Sending the revocations of ${stopped.allowanceIds.join(", ")} failed: ${why}`);
    });
}
