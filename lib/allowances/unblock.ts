// A relayer's next nonce to be mined held by a transaction the ledger does not have — its key used elsewhere, a wallet
// that sent with it at a low fee, an old row stored without its bytes — or by nothing at all (a gap) holds every payment
// and revocation sent after it in the mempool for good: replacement (./replacement.ts) knows only the ledger's
// transactions. So on each reconciliation run, for each relayer with transactions waiting in the ledger, its mined
// count is asked (one read of the chain); once it has stood below the ledger's lowest waiting nonce from it on, at the
// same nonce, on two looks HELD_FOR_MS apart (a transaction sent elsewhere just now at good fees is mined by then, not
// cancelled), the relayer sends a no-op at that nonce — nothing to itself, 21000 gas — that outbids what holds it,
// within the operator's most, or for a relayer that sends revocations within ten times today's fees (./fees.ts
// cancelFees, boundAs). It is signed under the relayer's lease and recorded in the ledger with its bytes before it is
// broadcast, for nobody (purpose "unblock", no person: no one's budget counts it): from then on it is the ledger's
// transaction of that nonce, broadcast again and replaced like any other, its receipt recorded by reconciliation. One
// the node refuses is dropped, and the next look bids higher. The looks are remembered by each instance, not shared:
// a memory lost at a start, or kept apart by each of several instances, only delays a no-op, never sends one early
// (docs/decisions/0032).
import { parseTransaction, serializeTransaction, type LocalAccount } from "viem";
import { runTransaction, unansweredAll, writeTogether } from "@/lib/db/transaction-script";
import { keccak256 } from "@/lib/wallet/keccak";
import { onChain } from "@/lib/wallet/chains";
import { boundAs, cancelFees, feesNow, feesOf, highestOffered, l1FeeOf } from "./fees";
import { relayerLease, withLease } from "./lease";
import { droppedRow, lowestWaitingFrom, relayedRow, relayersWaiting, waitingOrNoOpsAt } from "./relayer-ledger";
import { broadcastRecorded } from "./replacement";
import { relayerKeyOf } from "./settings";

/** How long a relayer's nonce stays held, seen on two looks, before the relayer takes it with a no-op. */
export const HELD_FOR_MS = 10_000;
/** The gas of a plain transfer: what a no-op to the relayer itself uses. */
const NO_OP_GAS = 21_000n;
/** How long the no-op waits for the relayer's lease: another instance sending or replacing goes first, the next run looks again. */
const LEASE_WAIT_MS = 2_000;

/** A relayer's nonce seen held, since when (ms), and whether the log said already that no no-op can outbid what holds it. */
export type HeldNonce = { nonce: number; since: number; outbid?: boolean };

/**
 * What a look finds of a relayer: its mined count `latest`, and the ledger's lowest nonce waiting from `latest` on
 * (`waitingFrom`; null: none). The nonce `latest` is held when the ledger waits only past it; `held` is that nonce as
 * known from this look on (`before` while it is the same), and `take` says it has been held since a look at least
 * HELD_FOR_MS before.
 */
export function heldNonce(
  before: HeldNonce | undefined,
  look: { latest: number; waitingFrom: number | null; at: number },
): { held: HeldNonce | null; take: boolean } {
  if (look.waitingFrom === null || look.waitingFrom <= look.latest) return { held: null, take: false };
  if (before?.nonce !== look.latest) return { held: { nonce: look.latest, since: look.at }, take: false };
  return { held: before, take: look.at - before.since >= HELD_FOR_MS };
}

/** Each relayer's nonce seen held in this process, by its lease's key. */
const heldNonces = new Map<string, HeldNonce>();

/**
 * Looks at each relayer with transactions waiting in the ledger, and takes a nonce held long enough with a no-op.
 * `failed` hears each relayer's failure (a node that does not answer: looked at again next run).
 */
export async function unblockHeldNonces(failed: (error: unknown) => void): Promise<void> {
  const looked = new Set<string>();
  for (const { chainId, relayer } of await relayersWaiting()) {
    const account = relayerKeyOf(chainId, relayer);
    if (!account) continue;
    const key = relayerLease(chainId, account.address);
    looked.add(key);
    await lookAt(chainId, account, key).catch(failed);
  }
  for (const key of heldNonces.keys()) if (!looked.has(key)) heldNonces.delete(key);
}

/** One look at a relayer: its mined count read once, the ledger's waiting from it; a nonce held long enough is taken. */
async function lookAt(chainId: number, account: LocalAccount, key: string) {
  const latest = await onChain(chainId, (client) => client.getTransactionCount({ address: account.address, blockTag: "latest" }));
  const waitingFrom = await lowestWaitingFrom(chainId, account.address, latest);
  const { held, take } = heldNonce(heldNonces.get(key), { latest, waitingFrom, at: Date.now() });
  if (!held) heldNonces.delete(key);
  else heldNonces.set(key, held);
  if (held && take) await takeNonce(chainId, account, held);
}

/** Sends the no-op at the held nonce, under the relayer's lease, once the ledger still has nothing waiting there. */
async function takeNonce(chainId: number, account: LocalAccount, held: HeldNonce) {
  const { nonce } = held;
  const relayer = account.address;
  await withLease(
    relayerLease(chainId, relayer),
    async (lease) => {
      const rows = await waitingOrNoOpsAt(chainId, relayer, nonce);
      // another instance's no-op, or a transaction the ledger had, waits there now: replaced as any other if need be
      if (rows.some((row) => row.status === "sent")) return;
      const now = await onChain(chainId, feesNow);
      const refused = highestOffered(rows.flatMap((row) => (row.raw ? [feesOf(parseTransaction(row.raw))] : [])));
      const purpose = boundAs(chainId, "unblock", relayer);
      const fees = cancelFees(chainId, now, refused, purpose);
      if (!fees) {
        const most = purpose === "revocation" ? "ten times today's fees" : "the most the relayer pays (ALLOWANCE_MAX_FEE_PER_GAS)";
        if (!held.outbid)
          console.warn(
            `Relayer ${relayer} on chain ${chainId}: its nonce ${nonce} is held by a transaction this server did not send, ` +
              `and the node refused no-ops there up to ${most}: its transactions after it wait until that one is mined or gone.`,
          );
        held.outbid = true;
        return;
      }
      const unsigned = { type: "eip1559", chainId, nonce, to: relayer, value: 0n, gas: NO_OP_GAS, ...fees } as const;
      const l1Fee = await onChain(chainId, (client) => l1FeeOf(client, chainId, serializeTransaction(unsigned)));
      const signed = await account.signTransaction(unsigned);
      const hash = keccak256(signed);
      const row = relayedRow({
        hash,
        chainId,
        relayer,
        nonce,
        raw: signed,
        gasLimit: NO_OP_GAS,
        cost: NO_OP_GAS * fees.maxFeePerGas + (l1Fee ?? 0n),
        l1Fee,
        for: { purpose: "unblock", userId: null, allowanceId: null },
      });
      await runTransaction(function* () {
        yield* unansweredAll([row, lease.confirmed()]);
      });
      // Refused (what holds the nonce offers more, or it was mined meanwhile): never broadcast again; the next look bids higher.
      if ((await broadcastRecorded(chainId, signed)) !== "taken") return writeTogether([droppedRow(hash)]);
      // Nodes differ in what their pool shows of another sender's transaction (one that fees left behind is not counted
      // as pending by all): the line says both.
      console.warn(
        `Relayer ${relayer} on chain ${chainId}: its nonce ${nonce} was held by a transaction this server did not send (is ` +
          `its key used elsewhere?) or left empty, and its transactions after it waited; a no-op at that nonce (${hash}) takes it.`,
      );
    },
    { waitMs: LEASE_WAIT_MS },
  );
}
