// A refusal of an allowance in the person's units, for the agent and the person: "0.004 ETH is over your allowance of
// 0.01 ETH a day; 0.002 ETH left until it resets at 14:05 UTC." Shared by every way an agent pays from an allowance (a
// transfer, an x402 payment).
import { formatUnits } from "viem";
import { atUtc } from "@/lib/clock";
import { DAY } from "./caveats";
import type { AllowanceRefusal } from "./spend";
import { assetNames } from "./view";
import type { AssetNames } from "./wording";

type Left = NonNullable<AllowanceRefusal["left"]>;

/** What the payment asked for and the allowance's cap a period, in the asset's smallest unit. */
export type Asked = { amount: bigint; perPeriod: bigint };

const PER: Record<number, string> = { [3600]: "an hour", [DAY]: "a day", [7 * DAY]: "a week" };

/** "a day", "every 2 days": the allowance's period, after an amount. */
function per(seconds: number): string {
  if (PER[seconds]) return PER[seconds];
  if (seconds % DAY === 0) return `every ${seconds / DAY} days`;
  return seconds % 3600 === 0 ? `every ${seconds / 3600} hours` : `every ${seconds} seconds`;
}

/**
 * Above the allowance, in words: the amount, the cap by its period, what is left and when it resets (with its date
 * when that is not today). Without `asked` (a caller that does not know the cap) only what is left and when.
 */
export function overAllowanceWords(left: Left, names: AssetNames, now: Date, asked?: Asked): string {
  // Counted over the allowance's whole life: no reset brings payments back.
  if (left.transfersLeft < 1) return "This allowance has no payments left: they are counted over its whole life, not per period.";
  const units = (amount: bigint) => `${formatUnits(amount, names.decimals)} ${names.symbol}`;
  const available = BigInt(left.available);
  const rest = `${available === 0n ? "nothing" : units(available)} left until it resets ${atUtc(new Date(left.resetsAt), now)}.`;
  if (!asked) return `Over your allowance: ${rest}`;
  const over = `${units(asked.amount)} is over your allowance of ${units(asked.perPeriod)} ${per(left.periodSeconds)}`;
  // Above the cap by itself: waiting for the reset would not help.
  return asked.amount > asked.perPeriod ? `${over}.` : `${over}; ${rest}`;
}

/**
 * The refusal in the person's units when it is about what is left (the cap, the number of payments); any other
 * refusal (the chain or the relayer said no) in its own words.
 */
export async function refusalWords(
  chainId: number,
  refusal: Pick<AllowanceRefusal, "left" | "message"> & Partial<Pick<AllowanceRefusal, "reason">>,
  now: Date,
  asked?: Asked,
): Promise<string> {
  const left = refusal.left;
  if (!left || (refusal.reason && refusal.reason !== "over_cap" && refusal.reason !== "no_transfers_left")) return refusal.message;
  return overAllowanceWords(left, await assetNames(chainId, left.token), now, asked);
}
