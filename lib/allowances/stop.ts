// Stopping allowances here when what they serve ends — their client's access, their grant, their wallet — in the
// same transaction that ends it, on every path (the person, the client's own token revocation, a replayed token).
// The server refuses their spends from then on; the delegations stay live on chain until the person signs their
// disabling (/clients asks for it), since only the person's key can disable them.
import type { AuditInput } from "@/lib/audit";
import type { Tx } from "@/lib/db";
import type { Ended } from "@/lib/wallet/request-lifecycle";

/** Marks the live allowances of `where` `revoking` inside `tx`; returns the events to record with it. */
export async function stopAllowancesIn(tx: Tx, where: Ended, reason: string): Promise<AuditInput[]> {
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
  return stopped.map((allowance) => ({
    type: "allowance.stopped",
    userId: allowance.userId,
    credentialId: allowance.credentialId,
    data: { allowanceId: allowance.id, chainId: allowance.chainId, reason },
  }));
}
