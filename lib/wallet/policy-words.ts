// A refused cap said in the person's units, for the agent that reads the refusal (and the person it reports to):
// "0.6 ETH is over today's limit for Main: 0.5 ETH left, resets at 11:42 UTC". The rules count wei and a token's
// smallest unit; the words use the chain's coin and the token's own symbol and decimals, read from its contract.
import { formatUnits } from "viem";
import { utcTimeFrom } from "@/lib/clock";
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

const PERIOD = { day: ["today's", "a day"], week: ["this week's", "a week"] } as const;

/** The refusal's reason in the person's units, naming the wallet (and the chain, when the service has several). */
export async function inPersonsUnits(violation: PolicyViolation, walletName: string, now: Date): Promise<PolicyViolation> {
  const breach = violation.breach;
  if (!breach) return violation;
  const units = await unitOf(breach);
  const chains = config().chains;
  const chainName = chains.find((chain) => chain.id === breach.chainId)?.name;
  const wallet = chains.length > 1 && chainName ? `${walletName} on ${chainName}` : walletName;
  const amount = units(breach.amount);
  if (breach.window === "transaction") {
    return violation.saying(`${amount} is over the limit for ${wallet} of ${units(breach.limit)} a transaction`);
  }
  const [current, per] = PERIOD[breach.window];
  // Above the cap by itself: waiting for the window to reset would not help.
  if (!breach.resetsAt || breach.amount > breach.limit) {
    return violation.saying(`${amount} is over the limit for ${wallet} of ${units(breach.limit)} ${per}`);
  }
  return violation.saying(
    `${amount} is over ${current} limit for ${wallet}: ${units(breach.remaining)} left, resets at ${utcTimeFrom(breach.resetsAt, now)}`,
  );
}
