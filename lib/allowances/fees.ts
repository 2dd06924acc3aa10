// What a relayer offers to pay per gas: the fees of the day, held under the operator's most (ALLOWANCE_MAX_FEE_PER_GAS),
// raised when a transaction waits underpriced by at least what a node takes as a replacement, and the L1 data fee an
// OP-stack chain charges beside gas. Pure but for the reads of the chain they name.
import { encodeFunctionData, parseAbi, type Hex, type PublicClient } from "viem";
import { AppError } from "@/lib/http/errors";
import { chainById } from "@/lib/wallet/chains";
import type { RelayPurpose } from "./relayer-ledger";
import { maxFeePerGas, sendsRevocations } from "./settings";

export type Fees = { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };

/** The fees a signed transaction offers (parseTransaction's), 0 where it names none. */
export const feesOf = (transaction: { maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint }): Fees => ({
  maxFeePerGas: transaction.maxFeePerGas ?? 0n,
  maxPriorityFeePerGas: transaction.maxPriorityFeePerGas ?? 0n,
});

/**
 * The fees viem's estimateFeesPerGas would set (the latest base fee × 1.2, plus the node's priority fee), and that base
 * fee, from the block's header read raw, in the same exchange with the node as the relayer's nonce and balance: viem
 * reads the block and then the priority fee, and formats the whole block on the way.
 */
export async function feesNow(client: PublicClient): Promise<Fees & { baseFeePerGas: bigint }> {
  const [block, priority] = await Promise.all([
    client.request({ method: "eth_getBlockByNumber", params: ["latest", false] }),
    client.request({ method: "eth_maxPriorityFeePerGas" }).catch(() => null),
  ]);
  if (!block?.baseFeePerGas || priority === null) {
    const estimated = await client.estimateFeesPerGas();
    return { ...estimated, baseFeePerGas: ((estimated.maxFeePerGas - estimated.maxPriorityFeePerGas) * 10n) / 12n };
  }
  const baseFeePerGas = BigInt(block.baseFeePerGas);
  const maxPriorityFeePerGas = BigInt(priority);
  return { maxFeePerGas: (baseFeePerGas * 12n) / 10n + maxPriorityFeePerGas, maxPriorityFeePerGas, baseFeePerGas };
}

/** Network fees above the operator's most: a payment is not sent until they fall. */
export class FeesTooHighError extends AppError {
  constructor(chainId: number, most: bigint, baseFee: bigint) {
    super(
      "allowance_unavailable",
      `Network fees on ${chainById(chainId).name} are above the most the relayer pays (${gwei(most)} gwei per gas; the base fee ` +
        `is ${gwei(baseFee)} gwei now): nothing was sent. Try again when they fall.`,
      503,
    );
  }
}

/** Wei per gas in gwei, to two decimals at most. */
function gwei(wei: bigint): string {
  const hundredths = (wei + 5_000_000n) / 10_000_000n;
  const fraction = (hundredths % 100n).toString().padStart(2, "0").replace(/0+$/, "");
  return `${hundredths / 100n}${fraction ? `.${fraction}` : ""}`;
}

/**
 * The most a relayer pays per gas for `purpose` on the chain: the operator's, but for a revocation, which stops the
 * person's money moving and is held to a gas budget of its own: it pays the day's fees. A no-op of a relayer that
 * sends revocations (its own lane, or the one key they share with payments) is bounded as a revocation: what holds that
 * relayer's nonce holds people's revocations behind it (boundAs).
 */
const mostFor = (chainId: number, purpose: RelayPurpose) => (purpose === "revocation" ? null : maxFeePerGas(chainId));

/** The purpose whose most bounds `relayer`'s transaction for `purpose`: a revocation's for a no-op of a relayer that sends revocations. */
export const boundAs = (chainId: number, purpose: RelayPurpose, relayer: string): RelayPurpose =>
  purpose === "unblock" && sendsRevocations(chainId, relayer) ? "revocation" : purpose;

/**
 * The fees a transaction is signed with: those of the day, held under the operator's most on the chain. A payment is
 * refused while the base fee alone is above it (FeesTooHighError); an authorization is signed at the most and waits in
 * the mempool until the base fee falls to it; a revocation pays the day's fees.
 */
export function feesWithinMost(chainId: number, now: Fees & { baseFeePerGas: bigint }, purpose: RelayPurpose): Fees {
  const most = mostFor(chainId, purpose);
  if (most === null || now.maxFeePerGas <= most) return { maxFeePerGas: now.maxFeePerGas, maxPriorityFeePerGas: now.maxPriorityFeePerGas };
  if (purpose === "payment" && now.baseFeePerGas > most) throw new FeesTooHighError(chainId, most, now.baseFeePerGas);
  return { maxFeePerGas: most, maxPriorityFeePerGas: now.maxPriorityFeePerGas < most ? now.maxPriorityFeePerGas : most };
}

/**
 * What nodes take as a replacement of a waiting transaction: both fees at least this many hundredths of the old
 * (geth's and hardhat's price bump is 10 %; Erigon's and Nethermind's no more). Asked 12.5 %, so that a node that
 * rounds differently takes it too.
 */
const REPLACEMENT_BUMP = 1125n;
const NODES_MINIMUM_BUMP = 1100n;
/**
 * Where the operator set no most: a replacement pays at most this many times what its nonce's first transaction
 * offered, a no-op that takes a nonce this many times today's fees.
 */
const DEFAULT_MOST_TIMES = 10n;

const timesPerMille = (value: bigint, perMille: bigint) => (value * perMille + 999n) / 1000n;
const larger = (a: bigint, b: bigint) => (a > b ? a : b);

/** The highest fees among `offers`, each fee on its own; null for none. */
export function highestOffered(offers: Fees[]): Fees | null {
  if (!offers.length) return null;
  const most = (pick: (fees: Fees) => bigint) => offers.map(pick).reduce(larger);
  return { maxFeePerGas: most((fees) => fees.maxFeePerGas), maxPriorityFeePerGas: most((fees) => fees.maxPriorityFeePerGas) };
}

/**
 * The fees asked (`maxFee`, `tip`) held to `most`, the tip within the max fee; null when what is left does not bump
 * `over` (what the node may hold at the nonce: the transaction replaced) by the node's minimum, or offers no more than
 * `refused` (the most the node refused at the nonce) in either fee: the node compares an offer with what it holds, which
 * may be another sender's transaction, known only by what it refused.
 */
function raisedWithin(most: bigint, maxFee: bigint, tip: bigint, over: Fees | null, refused: Fees | null): Fees | null {
  const maxFeePerGas = maxFee > most ? most : maxFee;
  const maxPriorityFeePerGas = tip > maxFeePerGas ? maxFeePerGas : tip;
  const bumpsEnough =
    !over ||
    (maxFeePerGas >= timesPerMille(over.maxFeePerGas, NODES_MINIMUM_BUMP) &&
      maxPriorityFeePerGas >= timesPerMille(over.maxPriorityFeePerGas, NODES_MINIMUM_BUMP));
  const offersMore = !refused || maxFeePerGas > refused.maxFeePerGas || maxPriorityFeePerGas > refused.maxPriorityFeePerGas;
  return bumpsEnough && offersMore ? { maxFeePerGas, maxPriorityFeePerGas } : null;
}

/**
 * A fee asked, the most of: today's, 12.5 % above `above`'s, and twice what the node refused (what holds the nonce
 * offers more by an amount the node does not say).
 */
const asked = (now: Fees, above: Fees | null, refused: Fees | null, pick: (fees: Fees) => bigint) =>
  [pick(now), above ? timesPerMille(pick(above), REPLACEMENT_BUMP) : 0n, refused ? 2n * pick(refused) : 0n].reduce(larger);

/**
 * Fees a waiting transaction is replaced with, or null when it needs none or none can be sent. It needs one when it
 * cannot be mined at today's fees: its max fee below the base fee with its tip, or its tip below the node's; or once
 * the node refused its bytes or a replacement at its nonce (`refused`: the most refused there), since then another
 * sender's transaction holds the nonce in the node's pool. The replacement offers today's fees, 12.5 % above the old
 * and twice the refused, whichever is more, up to the operator's most (or ten times its nonce's first offer where
 * there is none, as for a revocation); none where the most does not leave the node's minimum bump, or no more than
 * the refused.
 */
export function replacementFees(
  chainId: number,
  purpose: RelayPurpose,
  waiting: Fees,
  now: Fees & { baseFeePerGas: bigint },
  first: Fees,
  refused: Fees | null = null,
): Fees | null {
  const minable =
    waiting.maxFeePerGas >= now.baseFeePerGas + waiting.maxPriorityFeePerGas && waiting.maxPriorityFeePerGas >= now.maxPriorityFeePerGas;
  if (minable && !refused) return null;
  return raisedWithin(
    mostFor(chainId, purpose) ?? first.maxFeePerGas * DEFAULT_MOST_TIMES,
    asked(now, waiting, refused, (fees) => fees.maxFeePerGas),
    asked(now, waiting, refused, (fees) => fees.maxPriorityFeePerGas),
    waiting,
    refused,
  );
}

/**
 * Fees of a no-op that takes a relayer's nonce from a transaction the ledger does not have (lib/allowances/unblock.ts),
 * or null when none can outbid what the node refused: today's fees 12.5 % above, which replace one waiting below them
 * (with a tip no higher than today's); once the node refused such a no-op (`refused`: the most one offered), twice
 * that. Up to the most of `purpose` (boundAs: a relayer that sends revocations has none), or ten times today's where
 * none is set.
 */
export function cancelFees(chainId: number, now: Fees, refused: Fees | null, purpose: RelayPurpose = "unblock"): Fees | null {
  return raisedWithin(
    mostFor(chainId, purpose) ?? now.maxFeePerGas * DEFAULT_MOST_TIMES,
    asked(now, now, refused, (fees) => fees.maxFeePerGas),
    asked(now, now, refused, (fees) => fees.maxPriorityFeePerGas),
    null,
    refused,
  );
}

/** The OP stack's GasPriceOracle predeploy: what posting a transaction's data to L1 costs, beside its gas. */
const GAS_PRICE_ORACLE = "0x420000000000000000000000000000000000000F";
const GAS_PRICE_ORACLE_ABI = parseAbi(["function getL1Fee(bytes _data) view returns (uint256)"]);

/**
 * The L1 data fee the chain charges for the transaction whose unsigned bytes are `unsigned`, from its GasPriceOracle;
 * null on a chain that charges none (CHAINS' `l1Fees`).
 */
export async function l1FeeOf(client: PublicClient, chainId: number, unsigned: Hex): Promise<bigint | null> {
  if (chainById(chainId).l1Fees !== "op-stack") return null;
  const data = encodeFunctionData({ abi: GAS_PRICE_ORACLE_ABI, functionName: "getL1Fee", args: [unsigned] });
  return BigInt(await client.request({ method: "eth_call", params: [{ to: GAS_PRICE_ORACLE, data }, "latest"] }));
}
