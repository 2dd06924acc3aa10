// Payments from allowances still in flight — the process that sent them stopped (a crash, a deploy) or the chain had
// not mined them within the minute the agent waits — are settled against the chain when the server starts and every
// 15 s after, on every instance: each allowance's spends still `sent`, under its lease (settleInFlight: landed or
// failed, the allowance's state version moved, its receipt in the relayer's ledger), then each request those payments
// made that still says `submitted`, from its receipt or its ledger row (currentRequest, audited). Before them, every
// relayer transaction the node no longer knows (dropped from its pool) is broadcast again from the signed bytes its
// ledger row keeps while its nonce is free, with no lease: the same bytes change nothing a lease guards, and a payment
// still waiting for its receipt holds its allowance's; one the node holds but fees left behind is replaced at a higher
// fee (lib/allowances/replacement.ts), and so is one whose bytes the node refuses (another sender's transaction holds
// its nonce), outbidding that one. One whose nonce another transaction took fails its spend (settleInFlight), and
// its request in the same run. A revocation's or an authorization's that its sender stopped waiting for has its
// outcome written in the ledger (what it paid, or dropped at no cost): it no longer counts as waiting, nor against
// the person's budget at its most. A relayer's nonce that a transaction the ledger does not have holds (or a gap),
// with the ledger's transactions waiting behind it, is taken with a no-op once two runs found it held (./unblock.ts).
// Then what the agent accounts of stopped allowances still hold is sent back to the person (./agent-account.ts), and
// last the payments agents sent themselves from allowances their own keys spend are read from the chain's events
// (./own-payments.ts), so that the audit log has them without a view reading them first.
import type { Hex } from "viem";
import { selectRows } from "@/lib/db";
import { PreparedSelect } from "@/lib/db/prepared";
import { writeTogether } from "@/lib/db/transaction-script";
import { AppError } from "@/lib/http/errors";
import { runEvery } from "@/lib/runtime/every";
import { currentRequest, reloadRequest } from "@/lib/wallet/request-lifecycle";
import { ChainError } from "@/lib/wallet/chains";
import { returnStoppedAgentAccounts } from "./agent-account";
import { withLease } from "./lease";
import { recordAllOwnPayments } from "./own-payments";
import { minedRows, NonceHeldError, relayFate } from "./relay";
import { droppedRow, type RelayPurpose } from "./relayer-ledger";
import { replaceIfUnderpriced } from "./replacement";
import { settleInFlight } from "./spend";
import { unblockHeldNonces } from "./unblock";

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

/** Relayer transactions not seen mined yet, the newest first: each one the node lost is handed to it again. */
const RELAYED_IN_FLIGHT = new PreparedSelect<{ hash: string; chainId: number; purpose: RelayPurpose }>(
  "relayed_in_flight",
  `SELECT "hash", "chainId", "purpose" FROM "RelayedTransaction" WHERE "status" = 'sent' AND "raw" IS NOT NULL
    ORDER BY "createdAt" DESC LIMIT ${BATCH}`,
);

/** Submitted requests of relayer transactions whose receipt, or whose drop, the ledger has: each settles from it now. */
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

/** A relayer's transaction, or its nonce, not settled this run: a node that does not answer is asked again next run. */
function relayerFailed(error: unknown) {
  if (!(error instanceof ChainError)) logged("a relayer's transaction")(error);
}

/**
 * Hands the node again what it lost of the relayers' transactions, takes a relayer's nonce held by another sender's
 * (./unblock.ts), settles the spends still in flight allowance by allowance, then the requests they paid, then sends back
 * what stopped allowances' agent accounts hold.
 */
export async function reconcilePayments(): Promise<void> {
  for (const { hash, chainId, purpose } of await selectRows(RELAYED_IN_FLIGHT)) {
    // a node that does not answer is asked again next run; one that refuses the bytes again holds another sender's
    // transaction at their nonce, which a replacement outbids
    await relayFate(chainId, hash as Hex)
      .then(async (fate) => {
        if (fate === "pending") return replaceIfUnderpriced(chainId, hash as Hex);
        // A payment's outcome is written with its spend's, under its allowance's lease (below); a revocation's, an
        // authorization's, whose sender stopped waiting, or a no-op's, which no one waits for, here: what it paid, or
        // that it never will land.
        if (purpose !== "payment") await writeTogether(fate === "replaced" ? [droppedRow(hash as Hex)] : minedRows(fate));
      })
      .catch((error: unknown) => {
        if (error instanceof NonceHeldError) return replaceIfUnderpriced(chainId, error.hash, undefined, { refused: true });
        throw error;
      })
      .catch(relayerFailed);
  }
  await unblockHeldNonces(relayerFailed);
  for (const { allowanceId, chainId } of await selectRows(ALLOWANCES_IN_FLIGHT)) {
    await withLease(`allowance:${allowanceId}`, () => settleInFlight(allowanceId, chainId), { waitMs: LEASE_WAIT_MS }).catch(
      logged("an allowance's payments"),
    );
  }
  for (const { id } of await selectRows(REQUESTS_RECEIVED)) {
    await currentRequest(await reloadRequest(id)).catch(logged("a payment's request"));
  }
  await returnStoppedAgentAccounts();
  await recordAllOwnPayments(logged("an agent's own payments"));
}

/** Reconciles payments at once and every 15 s in this server process. */
export function startReconcilingPayments(): void {
  runEvery("Settling payments in flight", EVERY_MS, reconcilePayments, { firstAfterMs: 0 });
}
