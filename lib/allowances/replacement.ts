// A relayer's transaction that waits in the mempool because fees rose past what it offers is replaced: the same nonce,
// call and gas, signed again at today's fees or 12.5 % above its own, up to the operator's most (lib/allowances/fees.ts).
// The replacement is recorded before it is broadcast — its row in the ledger (the lineage of the first transaction of
// its nonce), the other's marked replaced, what named the other (a request, a spend, a revocation) naming it — so a
// process that stops right after still knows what may land; whichever of the lineage is mined, the others are marked
// replaced at no cost and everything names the mined one (relayer-ledger receiptRows). The person's coin budget counts
// only the one that may land, at its max fee, and a replacement that would take it over the budget is not sent.
import { parseTransaction, serializeTransaction, type Address, type Hex, type PublicClient, type TransactionSerializable } from "viem";
import { AppError } from "@/lib/http/errors";
import { runTransaction, unansweredAll, writeTogether } from "@/lib/db/transaction-script";
import { keccak256 } from "@/lib/wallet/keccak";
import { alreadyKnown, nodeWords } from "@/lib/wallet/reverts";
import { onChain } from "@/lib/wallet/chains";
import { boundAs, feesNow, feesOf, highestOffered, l1FeeOf, replacementFees, type Fees } from "./fees";
import { relayerLease, withLease } from "./lease";
import { gasSpentFor, refusedIn, refusedReplacementRows, relayedBytes, replacementRows } from "./relayer-ledger";
import { feeBudget, relayerKeyOf } from "./settings";

/** The transaction was mined, dropped or replaced meanwhile: nothing to replace. */
class NoLongerWaitingError extends AppError {
  constructor() {
    super("relay_settled", "The transaction no longer waits to be mined.", 409);
  }
}

/** How long a replacement waits for the relayer's lease: another instance replacing or sending goes first. */
const LEASE_WAIT_MS = 2_000;

/** What the node answered a broadcast: it holds the transaction, or refused it in its own words. */
type Broadcast = "taken" | { refused: string };

/**
 * Broadcasts through `client` a transaction recorded in the ledger as waiting: "taken" once the node holds it ("already
 * known" included), the node's words when it refused it. No answer of the node's own throws: it may have taken it,
 * and recorded as waiting, it is broadcast again if the node lost it.
 */
export function broadcastOn(client: PublicClient, signed: Hex): Promise<Broadcast> {
  return client.request({ method: "eth_sendRawTransaction", params: [signed] }).then(
    () => "taken" as const,
    (error: unknown) => {
      if (alreadyKnown(error)) return "taken" as const;
      const words = nodeWords(error);
      if (!words) throw error;
      return { refused: words };
    },
  );
}

/** broadcastOn, through the chain's client (a ChainError when the node does not answer). */
export function broadcastRecorded(chainId: number, signed: Hex): Promise<Broadcast> {
  return onChain(chainId, (client) => broadcastOn(client, signed));
}

/**
 * Replaces the relayer's transaction `hash` when it waits underpriced, or when the node refused it or a replacement of
 * its nonce (another sender's transaction holds the nonce: the replacement outbids it, doubling what was refused, as
 * far as the most allows); answers the replacement's hash, or null when it was not replaced: priced to be mined, no
 * longer waiting, past the operator's most, over the person's coin budget, or refused by the node (it waits on as it
 * was). A node that does not answer throws (a ChainError). `today`: the fees now, when the caller read them for
 * several transactions at once (a block's); asked otherwise. `refused`: the node refused its bytes just now.
 */
export async function replaceIfUnderpriced(
  chainId: number,
  hash: Hex,
  today?: Fees & { baseFeePerGas: bigint },
  { refused: itsBytesRefused = false } = {},
): Promise<Hex | null> {
  const row = await relayedBytes(hash);
  const account = row && relayerKeyOf(row.chainId, row.relayer);
  if (!row?.raw || row.status !== "sent" || row.nonce === null || !account) return null;
  const lineage = row.lineage ?? hash;
  const waiting = parseTransaction(row.raw);
  const first = lineage === hash ? waiting : parseTransaction((await relayedBytes(lineage))?.raw ?? row.raw);
  const now = today ?? (await onChain(chainId, feesNow));
  const refusedAt = (await refusedIn(lineage)).map((raw) => feesOf(parseTransaction(raw)));
  const refused = highestOffered(itsBytesRefused ? [feesOf(waiting), ...refusedAt] : refusedAt);
  const fees = replacementFees(chainId, boundAs(chainId, row.purpose, row.relayer), feesOf(waiting), now, feesOf(first), refused);
  if (!fees) return null;
  const gas = waiting.gas ?? 0n;
  const unsigned = { ...waiting, ...fees, r: undefined, s: undefined, v: undefined, yParity: undefined } as TransactionSerializable;
  // its bytes weigh a little more than the other's on an L1: weighed again
  const l1Fee = await onChain(chainId, (client) => l1FeeOf(client, chainId, serializeTransaction(unsigned)));
  const cost = gas * fees.maxFeePerGas + (l1Fee ?? 0n);
  const budget = row.purpose === "revocation" ? null : feeBudget(chainId);
  if (budget !== null && row.userId) {
    const spent = await gasSpentFor(row.userId, chainId);
    if (spent.coin - BigInt(row.cost ?? 0) + cost > budget) return null;
  }
  const signed = await account.signTransaction(unsigned as Parameters<typeof account.signTransaction>[0]);
  const replacement = keccak256(signed);
  const sent = {
    hash: replacement,
    chainId,
    relayer: account.address as Address,
    nonce: row.nonce,
    raw: signed,
    gasLimit: gas,
    cost,
    l1Fee,
    lineage,
    for: { purpose: row.purpose, userId: row.userId, allowanceId: row.allowanceId },
  };
  const recorded = await withLease(
    relayerLease(chainId, account.address),
    async (lease) => {
      try {
        await runTransaction(function* () {
          yield* unansweredAll([...replacementRows(sent, hash, () => new NoLongerWaitingError()), lease.confirmed()]);
        });
        return true;
      } catch (error) {
        if (error instanceof NoLongerWaitingError) return false;
        throw error;
      }
    },
    { waitMs: LEASE_WAIT_MS },
  );
  if (!recorded) return null;
  const answer = await broadcastRecorded(chainId, signed);
  // The node refused it (too small a bump for it, the nonce mined meanwhile): the other waits on as it was.
  if (answer !== "taken") {
    await writeTogether(refusedReplacementRows(replacement, hash, lineage, BigInt(row.cost ?? 0)));
    return null;
  }
  return replacement;
}
