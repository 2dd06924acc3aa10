// A refusal of an allowance in the person's units, for the agent: "0.006 ETH left today, resets at 14:05 UTC".
// Shared by every way an agent pays from an allowance (a transfer, an x402 payment).
import { formatUnits } from "viem";
import { utcTimeFrom } from "@/lib/clock";
import { DAY } from "./caveats";
import type { AllowanceRefusal } from "./spend";
import { assetNames } from "./view";

const PERIOD_NAMES: Record<number, string> = { [3600]: "this hour", [DAY]: "today", [7 * DAY]: "this week" };

/** What is left and when it resets, in the person's units, or the refusal's own words when it says nothing of that. */
export async function refusalWords(chainId: number, refusal: Pick<AllowanceRefusal, "left" | "message">, now: Date): Promise<string> {
  const left = refusal.left;
  if (!left) return refusal.message;
  const names = await assetNames(chainId, left.token);
  if (left.transfersLeft < 1) return "This allowance has no payments left: its number of payments is counted over its whole life.";
  const period = PERIOD_NAMES[left.periodSeconds] ?? "this period";
  const amount = `${formatUnits(BigInt(left.available), names.decimals)} ${names.symbol}`;
  return `Above this allowance: ${amount} left ${period}, resets at ${utcTimeFrom(new Date(left.resetsAt), now)}.`;
}
