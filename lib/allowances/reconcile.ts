// Payments from allowances still in flight — the process that sent them stopped (a crash, a deploy) or the chain had
// not mined them within the minute the agent waits — are settled against the chain when the server starts and every
// 15 s after, on every instance: each allowance's spends still `sent`, under its lease (settleInFlight: landed or
// failed, the allowance's state version moved, its receipt in the relayer's ledger), then each request those payments
// made that still says `submitted`, from its receipt (currentRequest, audited). A transaction the node no longer knows
// fails its spend and leaves its request submitted: the relayer keeps no signed bytes to broadcast again.
import { selectRows } from "@/lib/db";
import { PreparedSelect } from "@/lib/db/prepared";
import { AppError } from "@/lib/http/errors";
import { currentRequest, reloadRequest } from "@/lib/wallet/request-lifecycle";
import { withLease } from "./lease";
import { settleInFlight } from "./spend";

const EVERY_MS = 15_000;
/** At most this many of each per run: a backlog drains over several runs. */
const BATCH = 50;
/** A spend's own process holds its allowance's lease until the receipt: one held longer is tried on the next run. */
const LEASE_WAIT_MS = 1_000;

const ALLOWANCES_IN_FLIGHT = new PreparedSelect<{ allowanceId: string; chainId: number }>(
  "allowances_in_flight",
  `SELECT DISTINCT s."allowanceId", a."chainId" FROM "AllowanceSpend" s JOIN "Allowance" a ON a."id" = s."allowanceId"
    WHERE s."status" = 'sent' LIMIT ${BATCH}`,
);

/** Submitted requests of relayer transactions whose receipt the ledger has: each settles from it now. */
const REQUESTS_RECEIVED = new PreparedSelect<{ id: string }>(
  "requests_received",
  `SELECT r."id" FROM "AgentRequest" r JOIN "RelayedTransaction" t ON t."hash" = r."txHash"
    WHERE r."status" = 'submitted' AND t."status" <> 'sent' LIMIT ${BATCH}`,
);

/**
 * One allowance's, or one request's, settlement failed: said by its error's name only, and tried again next run. A
 * payment the node still holds (allowance_busy), or an allowance whose lease a live spend holds, is no failure.
 */
function logged(what: string) {
  return (error: unknown) => {
    if ((error instanceof AppError && error.code === "allowance_busy") || (error as Error).name === "LeaseTimeoutError") return;
    console.error(`Settling ${what} in flight failed: ${(error as Error).name}`);
  };
}

/** Settles the spends still in flight, allowance by allowance, then the requests they paid. */
export async function reconcilePayments(): Promise<void> {
  for (const { allowanceId, chainId } of await selectRows(ALLOWANCES_IN_FLIGHT)) {
    await withLease(`allowance:${allowanceId}`, () => settleInFlight(allowanceId, chainId), { waitMs: LEASE_WAIT_MS }).catch(
      logged("an allowance's payments"),
    );
  }
  for (const { id } of await selectRows(REQUESTS_RECEIVED)) {
    await currentRequest(await reloadRequest(id)).catch(logged("a payment's request"));
  }
}

/** Reconciles payments at once and every 15 s in this server process; a run still going is not overlapped. */
export function startReconcilingPayments(): void {
  let running = false;
  const run = () => {
    if (running) return;
    running = true;
    void reconcilePayments()
      .catch(logged("payments"))
      .finally(() => (running = false));
  };
  run();
  setInterval(run, EVERY_MS).unref();
}
