// The chain side of allowances: sending as the chain's relayer, which pays the gas. Every transaction is first run
// with the gas, fees and block it will carry (a call that behaves only where the base fee is 0, as in a bare eth_call,
// is caught), and is paid only within the person's gas budget and above the reserve kept for revocations. One
// relayer's nonces are chosen under a lease, so instances sharing it never send two transactions with one nonce, and
// the budget is checked and recorded in that same turn.
import {
  formatEther,
  formatTransactionReceipt,
  numberToHex,
  type Address,
  type Hex,
  type PublicClient,
  type SignedAuthorizationList,
  type TransactionReceipt,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  WaitForTransactionReceiptTimeoutError,
} from "viem";
import { atUtc } from "@/lib/clock";
import { auditedIn, type AuditInput } from "@/lib/audit";
import { AppError } from "@/lib/http/errors";
import { runTransaction, unansweredAll, writeTogether, type Query, type TransactionScript } from "@/lib/db/transaction-script";
import { keccak256 } from "@/lib/wallet/keccak";
import { alreadyKnown, asRevert, nodeWords, SendRefusedError } from "@/lib/wallet/reverts";
import { ChainError, chainById, onChain } from "@/lib/wallet/chains";
import { leaseTakenIn, withLease, type HeldLease } from "./lease";
import {
  BUDGET_WINDOW_MS,
  droppedRow,
  gasSpentFor,
  gasSpentIn,
  receiptRow,
  relayedBytes,
  relayedRow,
  type GasSpent,
  type RelayFor,
} from "./relayer-ledger";
import { relayerAccount, relayLimits } from "./settings";

/** How long a sent transaction may take to be mined before the caller hears it is still pending. */
const RECEIPT_TIMEOUT_MS = 60_000;
/** viem's default is 4 s: a spend holds its allowance's lease until the receipt, so ask often. */
const RECEIPT_POLL_MS = 250;
/** Every this many asks for the receipt, whether the relayer's nonce was mined in another transaction is asked too. */
const NONCE_ASKED_EVERY = 8;

class NoRelayerError extends AppError {
  constructor(chainId: number) {
    super(
      "allowance_unavailable",
      `No relayer is configured for chain ${chainId} (ALLOWANCE_RELAYERS), so allowances cannot be used there.`,
      409,
    );
  }
}

export function relayerOn(chainId: number) {
  const relayer = relayerAccount(chainId);
  if (!relayer) throw new NoRelayerError(chainId);
  return relayer;
}

/** The lease under which one instance at a time chooses the relayer's next nonce on the chain. */
const relayerLease = (chainId: number, relayer: Address) => `relayer:${chainId}:${relayer}`;

/** The relayer's turn taken in a payment's own transaction (relayerTurnIn): its lease, and the person's gas spent. */
export type RelayerTurn = { lease: HeldLease; spent: GasSpent };

/**
 * In the caller's transaction, alongside the allowance's lease it takes there: the chain's relayer's lease when it is
 * free, and what the relayer spent for the person in the budget's window (no relay for them can be sent meanwhile: it
 * would need the lease). Once committed: the turn for relay's `turn`, or null (no relayer, or its lease held).
 */
export function* relayerTurnIn(chainId: number, userId: string, alongside: HeldLease): TransactionScript<() => RelayerTurn | null> {
  const relayer = relayerAccount(chainId);
  if (!relayer) return () => null;
  const lease = yield* leaseTakenIn(relayerLease(chainId, relayer.address), alongside);
  const spent = yield* gasSpentIn(userId, chainId);
  return () => {
    const held = lease.held();
    return held && { lease: held, spent: spent() };
  };
}

/** The person's relays of the last 24 hours used their gas budget (for payments, or for revocations): nothing was sent. */
export class RelayBudgetError extends AppError {
  constructor(chainId: number, freesAt: Date, revocations = false) {
    const what = revocations ? ["revoking your allowances", "revocations"] : ["your allowances", "payments from allowances"];
    super(
      "relay_budget_used",
      `The relayer has paid as much gas for ${what[0]} on ${chainById(chainId).name} in the last 24 hours as it pays ` +
        `for one person; ${what[1]} resume ${atUtc(freesAt, new Date())}.`,
      429,
    );
  }
}

/** The relayer is down to the reserve it keeps for revocations: nothing but revocations is sent. */
export class RelayerLowError extends AppError {
  constructor(chainId: number) {
    super(
      "allowance_unavailable",
      `The relayer on ${chainById(chainId).name} is low on funds: until the operator refills it, it sends nothing but ` + "revocations.",
      503,
    );
  }
}

/** Runs the transaction's call as it would be sent; its gas (estimated unless given), or a WouldRevertError. */
async function rehearse(client: PublicClient, fields: Record<string, unknown>, gas: bigint | undefined): Promise<bigint> {
  const method = gas === undefined ? "eth_estimateGas" : "eth_call";
  const params = gas === undefined ? fields : { ...fields, gas: numberToHex(gas) };
  try {
    const answer = (await client.request({ method, params: [params, "pending"] } as never)) as Hex;
    return gas ?? BigInt(answer);
  } catch (error) {
    throw asRevert(error);
  }
}

/**
 * The fees viem's estimateFeesPerGas would set (the latest base fee × 1.2, plus the node's priority fee), from the
 * block's header read raw, in the same exchange with the node as the relayer's nonce and balance: viem reads the
 * block and then the priority fee, and formats the whole block on the way.
 */
export async function feesNow(client: PublicClient): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> {
  const [block, priority] = await Promise.all([
    client.request({ method: "eth_getBlockByNumber", params: ["latest", false] }),
    client.request({ method: "eth_maxPriorityFeePerGas" }).catch(() => null),
  ]);
  if (!block?.baseFeePerGas || priority === null) return client.estimateFeesPerGas();
  const maxPriorityFeePerGas = BigInt(priority);
  return { maxFeePerGas: (BigInt(block.baseFeePerGas) * 12n) / 10n + maxPriorityFeePerGas, maxPriorityFeePerGas };
}

/** When each chain's relayer was last said to be low, so that the log says it every few minutes, not every send. */
const warned = new Map<number, number>();
const WARN_EVERY_MS = 10 * 60_000;

/** Refuses what the relayer must not pay for, and says in the log when it nears its reserve. */
async function checkAffordable(
  chainId: number,
  relayer: Address,
  relayFor: RelayFor,
  cost: { gas: bigint; maxFeePerGas: bigint; balance: bigint },
  spentBefore: GasSpent | undefined,
) {
  const limits = relayLimits();
  const reserve = limits.reserveGas * cost.maxFeePerGas;
  if (cost.balance < 3n * reserve && Date.now() - (warned.get(chainId) ?? 0) > WARN_EVERY_MS) {
    warned.set(chainId, Date.now());
    console.warn(
      `Relayer ${relayer} on chain ${chainId} holds ${formatEther(cost.balance)}, near the ${formatEther(reserve)} it keeps for ` +
        "revocations at today's fees: payments from allowances stop below that. Refill it.",
    );
  }
  // A revocation protects a person: it draws on the reserve, within a budget of its own that payments cannot use up.
  const revocation = relayFor.purpose === "revocation";
  if (!revocation && cost.balance < cost.gas * cost.maxFeePerGas + reserve) throw new RelayerLowError(chainId);
  if (!relayFor.userId) return;
  const spent = (!revocation && spentBefore) || (await gasSpentFor(relayFor.userId, chainId, revocation ? "revocations" : "payments"));
  if (spent.gas + cost.gas > (revocation ? limits.revocationGasBudget : limits.gasBudget)) {
    throw new RelayBudgetError(chainId, new Date((spent.oldest ?? new Date()).getTime() + BUDGET_WINDOW_MS), revocation);
  }
}

/** The relayer's nonce of a transaction was mined in another one: this one is not mined, and never will be. */
class NonceTakenError extends ChainError {
  constructor(hash: Hex) {
    super(`Another transaction took the nonce of ${hash}: it will never be mined.`);
  }
}

/**
 * The transaction's receipt, asked for until RECEIPT_TIMEOUT_MS; a NonceTakenError once its nonce was mined in another
 * transaction (viem's waitForTransactionReceipt would answer with that one's receipt, and loses a transaction the node
 * dropped and was handed again). A failed ask is asked again: only the time limit ends the wait.
 */
async function minedWithin(client: PublicClient, hash: Hex, relayer: Address, nonce: number): Promise<TransactionReceipt> {
  const deadline = Date.now() + RECEIPT_TIMEOUT_MS;
  for (let asked = 1; ; asked++) {
    const taken =
      asked % NONCE_ASKED_EVERY === 0 &&
      (await client.getTransactionCount({ address: relayer, blockTag: "latest" }).catch(() => nonce)) > nonce;
    // Asked after the count: had this transaction taken the nonce, its receipt would be there now.
    const receipt = await client.getTransactionReceipt({ hash }).catch(() => null);
    if (receipt) return receipt;
    if (taken) throw new NonceTakenError(hash);
    if (Date.now() > deadline) throw new WaitForTransactionReceiptTimeoutError({ hash });
    await new Promise((resolve) => setTimeout(resolve, RECEIPT_POLL_MS));
  }
}

/** A relayer's transaction as the chain has it: mined (its receipt), still able to land, or never to land. */
export type RelayFate = TransactionReceipt | "pending" | "replaced";

/**
 * Where a relayer's transaction sent earlier stands. One the node no longer knows (dropped from its pool, lost on its
 * way) is broadcast again from its stored bytes while the relayer's mined count has not passed its nonce; once it has
 * with no receipt of this hash, another transaction took the nonce: `replaced`. So is one the node refused (the agent
 * heard nothing was paid), and one stored before its bytes were kept, once the node forgot it. A node that does not
 * answer, or refuses the bytes again, throws (a ChainError): no proof either way.
 */
export async function relayFate(chainId: number, hash: Hex): Promise<RelayFate> {
  const receiptNow = () => onChain(chainId, (client) => client.getTransactionReceipt({ hash }).catch(notFound));
  const [receipt, known] = await Promise.all([receiptNow(), onChain(chainId, (client) => client.getTransaction({ hash }).catch(notFound))]);
  if (receipt) return receipt;
  if (known) return "pending";
  const stored = await relayedBytes(hash);
  if (!stored?.raw || stored.nonce === null || stored.status !== "sent") return "replaced";
  const { raw, nonce } = stored;
  const mined = await onChain(chainId, (client) => client.getTransactionCount({ address: stored.relayer as Address, blockTag: "latest" }));
  // The receipt asked after the count: had this transaction taken the nonce, it would be there now.
  if (mined > nonce) return (await receiptNow()) ?? "replaced";
  await onChain(chainId, (client) =>
    client.request({ method: "eth_sendRawTransaction", params: [raw] }).catch((error: unknown) => {
      if (!alreadyKnown(error)) throw error;
    }),
  );
  return "pending";
}

/** A settled promise's value, or its error thrown. */
export function settledValue<T>(result: PromiseSettledResult<T>): T {
  if (result.status === "rejected") throw result.reason;
  return result.value;
}

/** A sent transaction: `receipt()` waits for it, and records with it what `recordWith` writes (in one transaction). */
export type Relayed = {
  hash: Hex;
  receipt: (recordWith?: (receipt: TransactionReceipt) => TransactionScript<void>) => Promise<TransactionReceipt>;
};

type Fees = { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };

/**
 * The fee fields each chain's last transaction was rehearsed and sent with. The next one is rehearsed with them in
 * the exchange that reads the chain's fees, and carries them when they still do (stillGood); otherwise it is
 * rehearsed again with the new fees before anything is signed.
 */
const rehearsedFees = new Map<number, Fees>();

/** Fees rehearsed earlier still do now: the same tip, and a cap at least today's (so it is mined as soon) and at most twice it. */
function stillGood(earlier: Fees | undefined, now: Fees): earlier is Fees {
  return (
    earlier !== undefined &&
    earlier.maxPriorityFeePerGas === now.maxPriorityFeePerGas &&
    earlier.maxFeePerGas >= now.maxFeePerGas &&
    earlier.maxFeePerGas <= 2n * now.maxFeePerGas
  );
}

/** A viem lookup's "not found" as null; any other failure (the node erring, not answering) stays an error. */
function notFound(error: unknown): null {
  if (error instanceof TransactionNotFoundError || error instanceof TransactionReceiptNotFoundError) return null;
  throw error;
}

/**
 * Signs and sends `call` as the relayer, for whom `relayFor` says, once it has run as it will be sent: a call that
 * would revert throws WouldRevertError and nothing is sent. `checks` are the caller's own reads of the chain, made in
 * the same exchange as the relayer's (their refusal comes first, and nothing is sent). What `recordWith` says is
 * written with the ledger's row before the transaction leaves, so that the caller has recorded it even if this
 * process stops right after sending; a required row of it (`requiring`) refusing, nothing is sent. `auditWith`: the
 * audit events of what `recordWith` records, appended in that same transaction.
 * `receipt()` waits for it to be mined (a WaitForTransactionReceiptTimeoutError after a minute: it may still land) and
 * records its cost; the send asks for it at once, which a node that mines at once already has. A transaction with an
 * authorization list is not rehearsed (its caller checks the authorization's nonce). `turn`: the relayer's lease and
 * the person's gas spent, taken in the caller's transaction (relayerTurnIn), which relay holds and frees from then on.
 */
export async function relay(
  chainId: number,
  call: { to: Address; data: Hex; gas?: bigint; authorizationList?: SignedAuthorizationList },
  relayFor: RelayFor,
  options: {
    recordWith?: (hash: Hex) => Query[];
    auditWith?: (hash: Hex) => AuditInput[];
    checks?: (client: PublicClient) => Promise<void>;
    turn?: RelayerTurn | null;
  } = {},
): Promise<Relayed> {
  const relayer = relayerOn(chainId);
  const { hash, mined, nonce } = await withLease(
    relayerLease(chainId, relayer.address),
    (lease) =>
      onChain(chainId, async (client) => {
        const fieldsWith = (fees: Fees) => ({
          from: relayer.address,
          to: call.to,
          data: call.data,
          maxFeePerGas: numberToHex(fees.maxFeePerGas),
          maxPriorityFeePerGas: numberToHex(fees.maxPriorityFeePerGas),
        });
        const rehearsing = !call.authorizationList;
        const earlier = rehearsedFees.get(chainId);
        // One exchange with the node: the caller's checks, the relayer's nonce, fees and balance, and the rehearsal with
        // the fees the last transaction carried.
        const [checked, nonce, fresh, balance, rehearsal] = await Promise.allSettled([
          options.checks?.(client),
          client.getTransactionCount({ address: relayer.address, blockTag: "pending" }),
          feesNow(client),
          client.getBalance({ address: relayer.address }),
          rehearsing && earlier ? rehearse(client, fieldsWith(earlier), call.gas) : Promise.resolve(undefined),
        ]);
        settledValue(checked);
        const now = settledValue(fresh);
        let fees: Fees = now;
        let gas: bigint;
        if (!rehearsing) gas = call.gas ?? 100_000n;
        else if (stillGood(earlier, now)) {
          fees = earlier;
          gas = settledValue(rehearsal)!;
        } else {
          gas = await rehearse(client, fieldsWith(now), call.gas);
          rehearsedFees.set(chainId, now);
        }
        const cost = { gas, maxFeePerGas: fees.maxFeePerGas, balance: settledValue(balance) };
        await checkAffordable(chainId, relayer.address, relayFor, cost, options.turn?.spent);
        const common = {
          chainId,
          nonce: settledValue(nonce),
          to: call.to,
          data: call.data,
          gas,
          maxFeePerGas: fees.maxFeePerGas,
          maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
        };
        const signed = call.authorizationList
          ? await relayer.signTransaction({ ...common, type: "eip7702", authorizationList: call.authorizationList })
          : await relayer.signTransaction({ ...common, type: "eip1559" });
        const hash = keccak256(signed);
        const ledger = relayedRow({
          hash,
          chainId,
          relayer: relayer.address,
          nonce: common.nonce,
          raw: signed,
          gasLimit: gas,
          for: relayFor,
        });
        // The relayer's lease confirmed last (leases are locked in the order allowance, then relayer): a holder that lost
        // it sends nothing, since another may be choosing this nonce.
        const events = options.auditWith?.(hash) ?? [];
        const audited = await runTransaction(function* () {
          yield* unansweredAll([ledger, ...(options.recordWith?.(hash) ?? []), lease.confirmed()]);
          return events.length ? yield* auditedIn(events) : async () => {};
        });
        // The receipt is asked right after the send, in the same exchange: a node that mines at once has it by then.
        const sending = client.request({ method: "eth_sendRawTransaction", params: [signed] });
        const mined = client
          .request({ method: "eth_getTransactionReceipt", params: [hash] })
          .then((receipt) => (receipt ? formatTransactionReceipt(receipt) : null))
          .catch(() => null);
        try {
          await sending.catch(async (error: unknown) => {
            // The node holds it already (these bytes reached it before): sent.
            if (alreadyKnown(error)) return;
            const words = nodeWords(error);
            if (words) {
              // Refused, the agent hears nothing was paid: its stored bytes must never be broadcast again (relayFate).
              await writeTogether([droppedRow(hash)]);
              throw new SendRefusedError(chainId, words);
            }
            // No answer of the node's own (a rate limit, a 5xx, a silence): it may have taken it, as its receipt or pool says.
            if ((await mined) ?? (await client.request({ method: "eth_getTransactionByHash", params: [hash] }).catch(() => null))) return;
            throw error;
          });
        } finally {
          // Appended apart only where the transaction could not (lib/audit auditedIn): after the send, off its path,
          // and whatever the node answered, since the request is recorded as sent.
          await audited();
        }
        return { hash, mined, nonce: common.nonce };
      }),
    { taken: options.turn?.lease },
  );
  return {
    hash,
    receipt: async (recordWith) => {
      const receipt = (await mined) ?? (await onChain(chainId, (client) => minedWithin(client, hash, relayer.address, nonce)));
      await runTransaction(function* () {
        yield* unansweredAll([receiptRow(receipt)]);
        if (recordWith) yield* recordWith(receipt);
      });
      return receipt;
    },
  };
}
