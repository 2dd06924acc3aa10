// The chain side of allowances: sending as the chain's relayer, which pays the gas. Every transaction is first run
// with the gas, fees and block it will carry (a call that behaves only where the base fee is 0, as in a bare eth_call,
// is caught), and is paid only within the person's gas budget and above the reserve kept for revocations. One
// relayer's nonces are chosen under a lease, so instances sharing it never send two transactions with one nonce, and
// the budget is checked and recorded in that same turn.
import {
  formatEther,
  formatTransactionReceipt,
  numberToHex,
  serializeTransaction,
  type Address,
  type Hex,
  type PublicClient,
  type SignedAuthorizationList,
  type TransactionReceipt,
  type LocalAccount,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
} from "viem";
import { atUtc } from "@/lib/clock";
import { auditedIn, type AuditInput } from "@/lib/audit";
import { AppError } from "@/lib/http/errors";
import { runTransaction, unansweredAll, writeTogether, type Query, type TransactionScript } from "@/lib/db/transaction-script";
import { keccak256 } from "@/lib/wallet/keccak";
import { asRevert, SendRefusedError } from "@/lib/wallet/reverts";
import { ChainError, chainById, onChain } from "@/lib/wallet/chains";
import { feesNow, feesWithinMost, l1FeeOf, type Fees } from "./fees";
import { leaseTakenIn, relayerLease, withLease, type HeldLease } from "./lease";
import {
  BUDGET_WINDOW_MS,
  droppedRow,
  gasSpentFor,
  gasSpentIn,
  lineageOf,
  nonceAfterWaiting,
  nonceAfterWaitingIn,
  receiptRows,
  relayedBytes,
  relayedRow,
  type GasSpent,
  type RelayFor,
} from "./relayer-ledger";
import { receiptWatched } from "./receipt-watcher";
import { broadcastOn, broadcastRecorded, replaceIfUnderpriced } from "./replacement";
import { feeBudget, relayerAccount, relayerAccounts, relayLimits } from "./settings";

/** How long a sent transaction may take to be mined before the caller hears it is still pending. */
const RECEIPT_TIMEOUT_MS = 60_000;

class NoRelayerError extends AppError {
  constructor(chainId: number) {
    super(
      "allowance_unavailable",
      `No relayer is configured for chain ${chainId} (ALLOWANCE_RELAYERS), so allowances cannot be used there.`,
      409,
    );
  }
}

/** The chain's first relayer of payments, or its relayer of revocations (their own where one is configured). */
export function relayerOn(chainId: number, purpose: "payments" | "revocations" = "payments") {
  const relayer = relayerAccount(chainId, purpose);
  if (!relayer) throw new NoRelayerError(chainId);
  return relayer;
}

/** Sends of this process holding or waiting for each relayer's lease (by its lease's key). */
const sendsAt = new Map<string, number>();
let rotation = 0;

/**
 * The relayer the next send on the chain goes through: of the chain's keys (ALLOWANCE_RELAYERS, one or several), the
 * one with the fewest sends of this process at its lease, in turn among equals; each chooses its nonces apart, so
 * several are sent side by side.
 */
export function relayerFor(chainId: number, purpose: "payments" | "revocations" = "payments"): LocalAccount {
  const accounts = relayerAccounts(chainId, purpose);
  if (!accounts.length) throw new NoRelayerError(chainId);
  const sends = (account: LocalAccount) => sendsAt.get(relayerLease(chainId, account.address)) ?? 0;
  const start = rotation++ % accounts.length;
  let chosen = accounts[start];
  for (let step = 1; step < accounts.length; step++) {
    const account = accounts[(start + step) % accounts.length];
    if (sends(account) < sends(chosen)) chosen = account;
  }
  return chosen;
}

/** The chain's relayer of payments with this address (a one-time delegation names it), or null when there is none. */
export function relayerNamed(chainId: number, address: Address): LocalAccount | null {
  return relayerAccounts(chainId).find((account) => account.address.toLowerCase() === address.toLowerCase()) ?? null;
}

/** Counts a send at the relayer's lease while `work` runs (relayerFor). */
async function sendingAt<T>(key: string, work: () => Promise<T>): Promise<T> {
  sendsAt.set(key, (sendsAt.get(key) ?? 0) + 1);
  try {
    return await work();
  } finally {
    const left = (sendsAt.get(key) ?? 1) - 1;
    if (left) sendsAt.set(key, left);
    else sendsAt.delete(key);
  }
}

/**
 * The relayer's turn taken in a payment's own transaction (relayerTurnIn): which relayer, its lease, the person's gas
 * spent, and the nonce after its last transaction the ledger has waiting.
 */
export type RelayerTurn = { relayer: LocalAccount; lease: HeldLease; spent: GasSpent; nonceAfterWaiting: number | null };

/**
 * In the caller's transaction, alongside the allowance's lease it takes there: a relayer's lease of the chain
 * (relayerFor, or the one `named`: a one-time delegation's delegate) when it is free, and what the relayers spent for
 * the person in the budget's window (no relay for them can be sent meanwhile through this relayer: it would need the
 * lease). Once committed: the turn for relay's `turn`, or null (no relayer, or its lease held).
 */
export function* relayerTurnIn(
  chainId: number,
  userId: string,
  alongside: HeldLease,
  named?: Address,
): TransactionScript<() => RelayerTurn | null> {
  if (!relayerAccounts(chainId).length) return () => null;
  const relayer = named ? relayerNamed(chainId, named) : relayerFor(chainId);
  if (!relayer) return () => null;
  const lease = yield* leaseTakenIn(relayerLease(chainId, relayer.address), alongside);
  const spent = yield* gasSpentIn(userId, chainId);
  const waiting = yield* nonceAfterWaitingIn(chainId, relayer.address);
  return () => {
    const held = lease.held();
    return held && { relayer, lease: held, spent: spent(), nonceAfterWaiting: waiting() };
  };
}

/** The person's relays of the last 24 hours used their budget (for payments, or for revocations): nothing was sent. */
export class RelayBudgetError extends AppError {
  constructor(chainId: number, freesAt: Date, revocations = false, unit: "gas" | "coin" = "gas") {
    const what = revocations ? ["revoking your allowances", "revocations"] : ["your allowances", "payments from allowances"];
    const paid = unit === "gas" ? "gas" : `in fees (${chainById(chainId).symbol})`;
    super(
      "relay_budget_used",
      `The relayer has paid as much ${paid} for ${what[0]} on ${chainById(chainId).name} in the last 24 hours as it pays ` +
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

/**
 * The gas last estimated for each kind of call its callers name (a payment: its delegation's redemption), so that the
 * next is run once at that gas (eth_call) rather than searched for again (eth_estimateGas runs it many times). At most
 * GAS_REMEMBERED_MOST kinds, the oldest forgotten first.
 */
const gasRemembered = new Map<string, bigint>();
const GAS_REMEMBERED_MOST = 10_000;

/**
 * Runs the transaction's call as it would be sent, at the latest block: its gas (estimated unless given, or the gas
 * remembered for `kind` when the call runs at it), or a WouldRevertError. Not at the pending block: a node builds that
 * from its whole pool for every read there (hardhat: about 10 ms a waiting payment), and what the caller's payments
 * still on their way change of its state, the caller counts itself (lib/allowances/spend.ts).
 */
async function rehearse(client: PublicClient, fields: Record<string, unknown>, gas: bigint | undefined, kind?: string): Promise<bigint> {
  const run = (method: "eth_call" | "eth_estimateGas", params: Record<string, unknown>) =>
    client.request({ method, params: [params, "latest"] } as never) as Promise<Hex>;
  const remembered = gas === undefined && kind !== undefined ? gasRemembered.get(kind) : undefined;
  // one that no longer runs at the gas remembered (a revert, or more gas needed now) is estimated, which says which
  if (
    remembered !== undefined &&
    (await run("eth_call", { ...fields, gas: numberToHex(remembered) }).then(
      () => true,
      () => false,
    ))
  )
    return remembered;
  try {
    if (gas !== undefined) {
      await run("eth_call", { ...fields, gas: numberToHex(gas) });
      return gas;
    }
    const estimated = BigInt(await run("eth_estimateGas", fields));
    if (kind !== undefined) {
      gasRemembered.delete(kind);
      gasRemembered.set(kind, estimated);
      if (gasRemembered.size > GAS_REMEMBERED_MOST) gasRemembered.delete(gasRemembered.keys().next().value!);
    }
    return estimated;
  } catch (error) {
    throw asRevert(error);
  }
}

/** When each chain's relayer was last said to be low, so that the log says it every few minutes, not every send. */
const warned = new Map<number, number>();
const WARN_EVERY_MS = 10 * 60_000;

/** Refuses what the relayer must not pay for, and says in the log when it nears its reserve. */
async function checkAffordable(
  chainId: number,
  relayer: Address,
  relayFor: RelayFor,
  cost: { gas: bigint; maxFeePerGas: bigint; l1Fee: bigint | null; balance: bigint },
  spentBefore: GasSpent | undefined,
) {
  const limits = relayLimits();
  const reserve = limits.reserveGas * cost.maxFeePerGas;
  const coin = cost.gas * cost.maxFeePerGas + (cost.l1Fee ?? 0n);
  if (cost.balance < 3n * reserve && Date.now() - (warned.get(chainId) ?? 0) > WARN_EVERY_MS) {
    warned.set(chainId, Date.now());
    console.warn(
      `Relayer ${relayer} on chain ${chainId} holds ${formatEther(cost.balance)}, near the ${formatEther(reserve)} it keeps for ` +
        "revocations at today's fees: payments from allowances stop below that. Refill it.",
    );
  }
  // A revocation protects a person: it draws on the reserve, within a budget of its own that payments cannot use up.
  const revocation = relayFor.purpose === "revocation";
  if (!revocation && cost.balance < coin + reserve) throw new RelayerLowError(chainId);
  if (!relayFor.userId) return;
  const spent = (!revocation && spentBefore) || (await gasSpentFor(relayFor.userId, chainId, revocation ? "revocations" : "payments"));
  const freesAt = () => new Date((spent.oldest ?? new Date()).getTime() + BUDGET_WINDOW_MS);
  if (spent.gas + cost.gas > (revocation ? limits.revocationGasBudget : limits.gasBudget))
    throw new RelayBudgetError(chainId, freesAt(), revocation);
  // The coin budget counts what the relayer pays, L1 data fees included; a revocation is held to its gas budget alone.
  const coinBudget = revocation ? null : feeBudget(chainId);
  if (coinBudget !== null && spent.coin + coin > coinBudget) throw new RelayBudgetError(chainId, freesAt(), false, "coin");
}

/** The relayer's nonce of a transaction was mined in another one: this one is not mined, and never will be. */
class NonceTakenError extends ChainError {
  constructor(hash: Hex) {
    super(`Another transaction took the nonce of ${hash}: it will never be mined.`);
  }
}

/**
 * The node refused a waiting transaction's bytes broadcast again, its nonce not yet mined: another sender's
 * transaction holds the nonce in its pool, at a fee the bytes do not outbid. A replacement may (replaceIfUnderpriced).
 */
export class NonceHeldError extends ChainError {
  constructor(
    readonly hash: Hex,
    words: string,
  ) {
    super(`The node refused ${hash} broadcast again (${words}): another transaction holds its nonce.`);
  }
}

/**
 * A mined relayer transaction, and what the ledger records with its receipt: its lineage (when one of its nonce was
 * replaced), and the L1 data fee estimated at its send.
 */
export type MinedRelay = TransactionReceipt & { lineage: Hex | null; estimatedL1Fee: bigint | null };

/** The ledger's rows of a mined relayer transaction (relayer-ledger receiptRows). */
export const minedRows = (mined: MinedRelay) => receiptRows(mined, mined);

type Member = { hash: Hex; status: string; l1Fee: string | null };

/** The lineage's first mined transaction, found among the receipts asked for each member, as a MinedRelay; else null. */
function minedOf(members: Member[], receipts: (TransactionReceipt | null)[], lineage: Hex): MinedRelay | null {
  const index = receipts.findIndex(Boolean);
  if (index < 0) return null;
  const { l1Fee } = members[index];
  return { ...receipts[index]!, lineage: members.length > 1 ? lineage : null, estimatedL1Fee: l1Fee === null ? null : BigInt(l1Fee) };
}

/** The transactions of `hash`'s nonce the ledger has (it and its replacements), and the one of them still waiting. */
async function lineageAround(hash: Hex) {
  const row = await relayedBytes(hash);
  const lineage = row?.lineage ?? hash;
  const members: Member[] = row?.lineage
    ? await lineageOf(row.lineage)
    : [{ hash, status: row?.status ?? "sent", l1Fee: row?.l1Fee ?? null }];
  return { row, lineage, members, head: members.find((member) => member.status === "sent")?.hash ?? hash };
}

const receiptsOf = (client: PublicClient, members: Member[]) =>
  Promise.all(members.map((member) => client.getTransactionReceipt({ hash: member.hash }).catch(notFound)));

/** Each chain's fees as read at its latest block the watcher saw: one read per block for all the relayer's waiting transactions. */
const feesAtBlock = new Map<number, { block: bigint; fees: Promise<Fees & { baseFeePerGas: bigint }> }>();

function feesAt(chainId: number, block: bigint) {
  const known = feesAtBlock.get(chainId);
  if (known?.block === block) return known.fees;
  const fees = onChain(chainId, feesNow);
  feesAtBlock.set(chainId, { block, fees });
  fees.catch(() => feesAtBlock.get(chainId)?.fees === fees && feesAtBlock.delete(chainId));
  return fees;
}

/**
 * The receipt of the transaction `hash`, or of one that replaced it at a higher fee, until RECEIPT_TIMEOUT_MS (a
 * WaitForTransactionReceiptTimeoutError); a NonceTakenError once its nonce was mined in another transaction (viem's
 * waitForTransactionReceipt would answer with that one's receipt, and loses a transaction the node dropped and was
 * handed again). The chain's receipt watcher (lib/allowances/receipt-watcher.ts) looks for its lineage in each new
 * block, with every other transaction waiting there; once per block, one waiting underpriced is replaced (`replaced`
 * hears of it) and the lineage is read again. A failed ask is asked again: only the time limit ends the wait.
 */
async function minedWithin(
  chainId: number,
  sent: { hash: Hex; relayer: Address; nonce: number; l1Fee: bigint | null },
  replaced: (hash: Hex) => void,
): Promise<MinedRelay> {
  let members: Member[] = [{ hash: sent.hash, status: "sent", l1Fee: sent.l1Fee?.toString() ?? null }];
  const current = async () => {
    const rows = await lineageOf(sent.hash).catch(() => []);
    if (rows.length) members = rows;
    return members.map((member) => member.hash);
  };
  const receipt = await receiptWatched(chainId, {
    hashes: [sent.hash],
    sender: { address: sent.relayer, nonce: sent.nonce },
    timeoutMs: RECEIPT_TIMEOUT_MS,
    everyBlock: async (block) => {
      const head = members.find((member) => member.status === "sent")?.hash;
      const now = head && (await feesAt(chainId, block).catch(() => undefined));
      const replacement = now && (await replaceIfUnderpriced(chainId, head, now).catch(() => null));
      if (replacement) replaced(replacement);
      return current();
    },
    // the ledger may have a replacement sent elsewhere (reconciliation): read again before the nonce is said taken
    current,
  });
  if (receipt === "taken") throw new NonceTakenError(sent.hash);
  const mined = minedOf(
    members,
    members.map((member) => (member.hash === receipt.transactionHash ? receipt : null)),
    sent.hash,
  );
  return mined ?? { ...receipt, lineage: null, estimatedL1Fee: sent.l1Fee };
}

/** A relayer's transaction as the chain has it: mined (it or a replacement), still able to land, or never to land. */
export type RelayFate = MinedRelay | "pending" | "replaced";

/**
 * Where a relayer's transaction sent earlier stands, with the replacements of its nonce. One the node no longer knows
 * (dropped from its pool, lost on its way) is broadcast again from its stored bytes while the relayer's mined count
 * has not passed its nonce; once it has with no receipt of its lineage, another transaction took the nonce:
 * `replaced`. So is one the node refused (the agent heard nothing was paid), and one stored before its bytes were
 * kept, once the node forgot it. A node that does not answer throws (a ChainError): no proof either way; one that
 * refuses the bytes again, a NonceHeldError.
 */
export async function relayFate(chainId: number, hash: Hex): Promise<RelayFate> {
  const { row, lineage, members, head } = await lineageAround(hash);
  const minedNow = async () => minedOf(members, await onChain(chainId, (client) => receiptsOf(client, members)), lineage);
  const [mined, known] = await Promise.all([
    minedNow(),
    onChain(chainId, (client) => client.getTransaction({ hash: head }).catch(notFound)),
  ]);
  if (mined) return mined;
  if (known) return "pending";
  const stored = head === hash ? row : await relayedBytes(head);
  if (!stored?.raw || stored.nonce === null || stored.status !== "sent") return "replaced";
  const { raw, nonce } = stored;
  const count = await onChain(chainId, (client) => client.getTransactionCount({ address: stored.relayer, blockTag: "latest" }));
  // The receipts asked after the count: had this lineage taken the nonce, one would be there now.
  if (count > nonce) return (await minedNow()) ?? "replaced";
  const answer = await broadcastRecorded(chainId, raw);
  if (answer !== "taken") throw new NonceHeldError(head, answer.refused);
  return "pending";
}

/** A settled promise's value, or its error thrown. */
export function settledValue<T>(result: PromiseSettledResult<T>): T {
  if (result.status === "rejected") throw result.reason;
  return result.value;
}

/**
 * A sent transaction: `hash` is the one of its nonce that may land (a replacement at a higher fee takes the first's
 * place); `receipt()` waits for it, and records with it what `recordWith` writes (in one transaction). The receipt's
 * hash is the one mined.
 */
export type Relayed = {
  readonly hash: Hex;
  receipt: (recordWith?: (receipt: TransactionReceipt) => TransactionScript<void>) => Promise<TransactionReceipt>;
};

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
 * `relayer`: the key to send with (one the call names, as a payment's one-time delegation does), else relayerFor's.
 * `recorded`: called once what `recordWith` says has committed, before the broadcast.
 */
export async function relay(
  chainId: number,
  call: { to: Address; data: Hex; value?: bigint; gas?: bigint; kind?: string; authorizationList?: SignedAuthorizationList },
  relayFor: RelayFor,
  options: {
    recordWith?: (hash: Hex) => Query[];
    auditWith?: (hash: Hex) => AuditInput[];
    checks?: (client: PublicClient) => Promise<void>;
    turn?: RelayerTurn | null;
    relayer?: LocalAccount;
    recorded?: () => void;
  } = {},
): Promise<Relayed> {
  const relayer =
    options.turn?.relayer ?? options.relayer ?? relayerFor(chainId, relayFor.purpose === "revocation" ? "revocations" : "payments");
  const key = relayerLease(chainId, relayer.address);
  const { hash, mined, nonce, l1Fee } = await sendingAt(key, () =>
    withLease(
      key,
      (lease) =>
        onChain(chainId, async (client) => {
          const fieldsWith = (fees: Fees) => ({
            from: relayer.address,
            to: call.to,
            data: call.data,
            ...(call.value && { value: numberToHex(call.value) }),
            maxFeePerGas: numberToHex(fees.maxFeePerGas),
            maxPriorityFeePerGas: numberToHex(fees.maxPriorityFeePerGas),
          });
          const rehearsing = !call.authorizationList;
          const earlier = rehearsedFees.get(chainId);
          // The nonce: after the ledger's transactions still waiting (a node's pool may not count one that fees left behind,
          // and the ledger has every one the relayer sent); with none, the node's pending count, which counts one sent
          // elsewhere. Not that count while some wait: a node builds its pending block from its whole pool to answer it
          // (hardhat: about 10 ms a waiting payment).
          // Then one exchange with the node: the caller's checks, the relayer's count, fees and balance, and the rehearsal
          // with the fees the last transaction carried.
          const waitingAfter = options.turn ? options.turn.nonceAfterWaiting : await nonceAfterWaiting(chainId, relayer.address);
          const [checked, count, fresh, balance, rehearsal] = await Promise.allSettled([
            options.checks?.(client),
            client.getTransactionCount({ address: relayer.address, blockTag: waitingAfter === null ? "pending" : "latest" }),
            feesNow(client),
            client.getBalance({ address: relayer.address }),
            rehearsing && earlier ? rehearse(client, fieldsWith(earlier), call.gas, call.kind) : Promise.resolve(undefined),
          ]);
          settledValue(checked);
          const now = settledValue(fresh);
          let rehearsed: Fees = now;
          let gas: bigint;
          if (!rehearsing) gas = call.gas ?? 100_000n;
          else if (stillGood(earlier, now)) {
            rehearsed = earlier;
            gas = settledValue(rehearsal)!;
          } else {
            gas = await rehearse(client, fieldsWith(now), call.gas, call.kind);
            rehearsedFees.set(chainId, now);
          }
          // Signed under the operator's most: the rehearsal's fees only change what a call that reads them does.
          const fees = feesWithinMost(chainId, { ...rehearsed, baseFeePerGas: now.baseFeePerGas }, relayFor.purpose);
          const nonce = Math.max(settledValue(count), waitingAfter ?? 0);
          const common = {
            chainId,
            nonce,
            to: call.to,
            data: call.data,
            value: call.value,
            gas,
            maxFeePerGas: fees.maxFeePerGas,
            maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
          };
          const unsigned = call.authorizationList
            ? ({ ...common, type: "eip7702", authorizationList: call.authorizationList } as const)
            : ({ ...common, type: "eip1559" } as const);
          const l1Fee = await l1FeeOf(client, chainId, serializeTransaction(unsigned));
          const cost = { gas, maxFeePerGas: fees.maxFeePerGas, l1Fee, balance: settledValue(balance) };
          await checkAffordable(chainId, relayer.address, relayFor, cost, options.turn?.spent);
          const signed = await relayer.signTransaction(unsigned);
          const hash = keccak256(signed);
          const ledger = relayedRow({
            hash,
            chainId,
            relayer: relayer.address,
            nonce,
            raw: signed,
            gasLimit: gas,
            cost: gas * fees.maxFeePerGas + (l1Fee ?? 0n),
            l1Fee,
            for: relayFor,
          });
          // The relayer's lease confirmed last (leases are locked in the order allowance, then relayer): a holder that lost
          // it sends nothing, since another may be choosing this nonce.
          const events = options.auditWith?.(hash) ?? [];
          const audited = await runTransaction(function* () {
            yield* unansweredAll([ledger, ...(options.recordWith?.(hash) ?? []), lease.confirmed()]);
            return events.length ? yield* auditedIn(events) : async () => {};
          });
          options.recorded?.();
          // The receipt is asked right after the send, in the same exchange: a node that mines at once has it by then.
          const sending = broadcastOn(client, signed);
          const mined = client
            .request({ method: "eth_getTransactionReceipt", params: [hash] })
            .then((receipt) => (receipt ? formatTransactionReceipt(receipt) : null))
            .catch(() => null);
          try {
            const answer = await sending.catch(async (error: unknown) => {
              // No answer of the node's own (a rate limit, a 5xx, a silence): it may have taken it, as its receipt or pool says.
              if ((await mined) ?? (await client.request({ method: "eth_getTransactionByHash", params: [hash] }).catch(() => null)))
                return "taken" as const;
              throw error;
            });
            if (answer !== "taken") {
              // Refused, the agent hears nothing was paid: its stored bytes must never be broadcast again (relayFate).
              await writeTogether([droppedRow(hash)]);
              throw new SendRefusedError(chainId, answer.refused);
            }
          } finally {
            // Appended apart only where the transaction could not (lib/audit auditedIn): after the send, off its path,
            // and whatever the node answered, since the request is recorded as sent.
            await audited();
          }
          return { hash, mined, nonce, l1Fee };
        }),
      { taken: options.turn?.lease },
    ),
  );
  let waiting = hash;
  return {
    get hash() {
      return waiting;
    },
    receipt: async (recordWith) => {
      const atOnce = await mined;
      const receipt: MinedRelay = atOnce
        ? { ...atOnce, lineage: null, estimatedL1Fee: l1Fee }
        : await onChain(chainId, () =>
            minedWithin(chainId, { hash, relayer: relayer.address, nonce, l1Fee }, (replacement) => (waiting = replacement)),
          ).catch(async (error: unknown) => {
            // it will never land, and cost nothing: the ledger says so now, not only once reconciliation looks
            if (error instanceof NonceTakenError) await writeTogether([droppedRow(waiting)]);
            throw error;
          });
      waiting = receipt.transactionHash;
      await runTransaction(function* () {
        yield* unansweredAll(minedRows(receipt));
        if (recordWith) yield* recordWith(receipt);
      });
      return receipt;
    },
  };
}
