// Which of a requirement's `accepts` entries the agent can pay within an allowance: the `exact` scheme by an
// `erc7710` transfer that names who may redeem it, on a CAIP-2 `eip155:<id>` chain the app configures, in a token an
// allowance of the grant covers, to a payee that allowance may pay. What is left of it is checked later, under the
// allowance's lease (pay.ts); here only what needs no chain.
import { getAddress, type Address } from "viem";
import { AppError } from "@/lib/http/errors";
import type { Offer } from "./requirement";

/** No entry of the requirement can be paid from this grant: nothing was signed. */
export class X402NotPayableError extends AppError {
  constructor(message: string) {
    super("payment_not_payable", message, 409);
  }
}

/**
 * What an allowance of the grant can pay on one chain: per token, the payees it may pay, or with `anyPayeeUpTo` any
 * payee, each payment at most that (the server's limit: the chain holds only the cap per period).
 */
export type Payable = {
  allowanceId: string;
  /** the allowance's delegation that pays it */
  delegationHash: string;
  chainId: number;
  token: Address;
  payees: Address[];
  anyPayeeUpTo?: bigint;
  /** any payee: the float the agent's account is kept topped up to (decision 0038); absent: none */
  float?: bigint;
};

/** Whom a delegation pays: its recipients, or any payee up to its stored most per payment (none stored: no one). */
export function payeesOf(
  meaning: { recipients: Address[]; anyPayee: boolean },
  row: { perPaymentMax: string | null; float: string | null },
): Pick<Payable, "payees" | "anyPayeeUpTo" | "float"> {
  if (!meaning.anyPayee) return { payees: meaning.recipients };
  return {
    payees: [],
    anyPayeeUpTo: row.perPaymentMax === null ? 0n : BigInt(row.perPaymentMax),
    ...(row.float !== null && { float: BigInt(row.float) }),
  };
}

/** An entry the agent will pay, in the terms the signing needs. */
export type Choice = {
  offer: Offer;
  allowanceId: string;
  delegationHash: string;
  chainId: number;
  asset: Address;
  payee: Address;
  amount: bigint;
  /** who may redeem the payment: the requirement's facilitator addresses */
  redeemers: Address[];
};

/** `eip155:8453` → 8453; null for any other namespace or form. */
export function chainIdOf(network: string): number | null {
  const match = /^eip155:([1-9][0-9]{0,15})$/.exec(network);
  return match ? Number(match[1]) : null;
}

function redeemersOf(extra: Record<string, unknown>): Address[] | null {
  const listed = extra.facilitatorAddresses;
  if (!Array.isArray(listed) || !listed.length) return null;
  if (!listed.every((entry) => typeof entry === "string" && /^0x[0-9a-fA-F]{40}$/.test(entry))) return null;
  return [...new Set(listed.map((entry) => getAddress(entry as string)))];
}

/** The chain an `exact` offer pays on when this service uses it, or why it cannot be paid at all. */
export function exactOfferChain(offer: Offer, configured: readonly number[]): number | string {
  if (offer.scheme !== "exact") return `the scheme "${offer.scheme}" (Agent Wallet pays "exact")`;
  const chainId = chainIdOf(offer.network);
  if (chainId === null) return `the network "${offer.network}" (Agent Wallet pays on eip155:<chain id> networks)`;
  if (!configured.includes(chainId)) return `chain ${chainId}, which this wallet service does not use`;
  return chainId;
}

/** Why `offer` cannot be paid from `payable` by erc7710, or the choice it makes. */
export function judgeOffer(offer: Offer, configured: readonly number[], payable: readonly Payable[]): Choice | string {
  const chainId = exactOfferChain(offer, configured);
  if (typeof chainId === "string") return chainId;
  if (offer.extra.assetTransferMethod !== "erc7710")
    return `chain ${chainId} by ${String(offer.extra.assetTransferMethod ?? "eip3009")} (within an allowance Agent Wallet pays by erc7710)`;
  const redeemers = redeemersOf(offer.extra);
  // An open leaf could be redeemed by anyone who sees the header: never signed.
  if (!redeemers) return `chain ${chainId} by erc7710 without facilitatorAddresses naming who may redeem the payment`;
  const amount = BigInt(offer.amount);
  if (amount <= 0n) return `a payment of ${offer.amount}`;
  const onChain = payable.filter((entry) => entry.chainId === chainId);
  if (!onChain.length) return `chain ${chainId}, where no live allowance of this grant pays`;
  const asset = getAddress(offer.asset);
  const forToken = onChain.filter((entry) => entry.token === asset);
  if (!forToken.length) return `the token ${asset} on chain ${chainId}, which no allowance of this grant covers`;
  const payee = getAddress(offer.payTo);
  const covering = forToken.find((entry) => entry.payees.includes(payee)) ?? forToken.find((entry) => entry.anyPayeeUpTo !== undefined);
  if (!covering) return `a payment to ${payee}, who is not among the allowance's recipients`;
  if (covering.anyPayeeUpTo !== undefined && amount > covering.anyPayeeUpTo)
    return (
      `a payment of ${amount} base units of ${asset}, above the most the allowance pays any payee at once ` +
      `(${covering.anyPayeeUpTo} base units)`
    );
  return { offer, allowanceId: covering.allowanceId, delegationHash: covering.delegationHash, chainId, asset, payee, amount, redeemers };
}

/** The cheapest of the entries judged payable, or a refusal saying why each entry cannot be paid. */
export function cheapest<T extends { amount: bigint }>(judged: readonly (T | string)[]): T {
  const choices = judged.filter((entry): entry is T => typeof entry !== "string");
  if (choices.length) return choices.reduce((best, next) => (next.amount < best.amount ? next : best));
  const reasons = [...new Set(judged as string[])];
  throw new X402NotPayableError(`No way of paying this resource is covered: it asks for ${reasons.join("; or ")}. Nothing was signed.`);
}

/** The cheapest entry the grant can pay within an allowance, or a refusal saying why each entry cannot be paid. */
export function chooseOffer(offers: readonly Offer[], configured: readonly number[], payable: readonly Payable[]): Choice {
  return cheapest(offers.map((offer) => judgeOffer(offer, configured, payable)));
}
