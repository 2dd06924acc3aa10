// A refused cap said in the person's units, for the agent that reads the refusal (and the person it reports to):
// "0.6 ETH is over your limit of 1 ETH a day for Main; 0.5 ETH left until it resets at 11:42 UTC". The rules count
// wei and a token's smallest unit; the words use the chain's coin and the token's own symbol and decimals, read from
// its contract.
import { formatUnits } from "viem";
import { atUtc } from "@/lib/clock";
import { config } from "@/lib/config";
import type { Breach, PolicyViolation } from "./policy";
import { tokenMetadata } from "./token-metadata";

/** How to write amounts of what the breach counts: the chain's coin, a token by its symbol, or an unknown token's base units. */
async function unitOf(breach: Breach): Promise<(amount: bigint) => string> {
  if (!breach.token) {
    const symbol = config().chains.find((chain) => chain.id === breach.chainId)?.symbol ?? "of the chain's coin";
    return (amount) => `${formatUnits(amount, 18)} ${symbol}`;
  }
  const token = breach.token;
  const metadata = breach.chainId === null ? null : await tokenMetadata(breach.chainId, token);
  if (metadata?.standard === "erc20") return (amount) => `${formatUnits(amount, metadata.decimals)} ${metadata.symbol}`;
  return (amount) => `${amount} base units of token ${token}`;
}

const PER = { transaction: "a transaction", day: "a day", week: "a week" } as const;

/**
 * The breach in words, given how to write its amounts: "0.3 ETH is over your limit of 0.5 ETH a day for Main; 0.2 ETH
 * left until it resets at 14:00 UTC". `resetsAt` is said only when waiting for it would let the amount through.
 */
export function breachWords(breach: Breach, units: (amount: bigint) => string, wallet: string, now: Date): string {
  const over = `${units(breach.amount)} is over your limit of ${units(breach.limit)} ${PER[breach.window]} for ${wallet}`;
  // Per transaction, or above a window's cap by itself: no reset would help.
  if (breach.window === "transaction" || !breach.resetsAt || breach.amount > breach.limit) return over;
  const left = breach.remaining === 0n ? "nothing" : units(breach.remaining);
  return `${over}; ${left} left until it resets ${atUtc(breach.resetsAt, now)}`;
}

/** The refusal's reason in the person's units, naming the wallet (and the chain, when the service has several). */
export async function inPersonsUnits(violation: PolicyViolation, walletName: string, now: Date): Promise<PolicyViolation> {
  const breach = violation.breach;
  if (!breach) return violation;
  const chains = config().chains;
  const chainName = chains.find((chain) => chain.id === breach.chainId)?.name;
  const wallet = chains.length > 1 && chainName ? `${walletName} on ${chainName}` : walletName;
  return violation.saying(breachWords(breach, await unitOf(breach), wallet, now));
}
