// A stored revocation whose send failed — the chain or its RPC unreachable, the relayer without funds, the process
// stopped between the commit that stopped the allowance and the send — is sent again by the server until the chain
// confirms it, with no one at a browser. Each allowance is sent at most once per ALLOWANCE_REVOCATION_RETRY_SECONDS
// whichever instance sends: claiming it moves its `revocationSentAt`, and only the instance whose update took sends.
// Two sends that still meet wait on the allowance's lease, and the second finds it `revoked` (audited once).
import { config } from "@/lib/config";
import { db } from "@/lib/db";
import { runEvery } from "@/lib/runtime/every";
import { sendOrLog } from "./stop";

/** At most this many allowances are claimed per run: a backlog drains over several runs, none holds many leases. */
const BATCH = 20;

/** Claims the allowances whose stored revocation is due to be sent again, up to BATCH, and sends them. */
export async function resendDueRevocations(): Promise<void> {
  const now = new Date();
  const due = {
    status: "revoking",
    revocationSignature: { not: null },
    // one waiting for the person is not sent again
    attention: null,
    OR: [{ revocationSentAt: null }, { revocationSentAt: { lt: new Date(now.getTime() - config().revocationRetryMs) } }],
  };
  const candidates = await db().allowance.findMany({
    where: due,
    select: { id: true },
    // the longest waiting first: ones the chain keeps refusing do not starve the rest
    orderBy: { revocationSentAt: { sort: "asc", nulls: "first" } },
    take: BATCH,
  });
  const claimed: string[] = [];
  for (const { id } of candidates) {
    const { count } = await db().allowance.updateMany({ where: { id, ...due }, data: { revocationSentAt: now } });
    if (count) claimed.push(id);
  }
  if (claimed.length) await sendOrLog(claimed);
}

/** Looks for due revocations every ALLOWANCE_REVOCATION_RETRY_SECONDS in this server process. */
export function startResendingRevocations(): void {
  runEvery("Resending allowance revocations", config().revocationRetryMs, resendDueRevocations);
}
