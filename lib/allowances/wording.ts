// A decoded delegation in plain words, built only from what was signed (readDelegation's meaning): the approval page
// and /clients say exactly this. Periods are fixed windows counted from the start date, so the words name when each
// one begins rather than saying "a day" as if it rolled. Browser-safe.
import { formatUnits } from "viem";
import { utcDateTime, utcTime } from "@/lib/clock";
import { DAY, type DelegationMeaning } from "./caveats";

/** How an asset is named: the chain's coin or a token (symbol and decimals read from its contract). */
export type AssetNames = { symbol: string; decimals: number };

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/** "per day, the day starting at 14:05 UTC" — the window the enforcer counts, in words. */
export function periodWords(periodSeconds: number, startsAt: number): string {
  const start = new Date(startsAt * 1000);
  if (periodSeconds === DAY) return `per day, the day starting at ${utcTime(start)}`;
  if (periodSeconds === 7 * DAY) return `per week, the week starting on ${WEEKDAYS[start.getUTCDay()]} at ${utcTime(start)}`;
  if (periodSeconds === 3600) return `per hour, the hour starting at minute ${start.getUTCMinutes()}`;
  const unit =
    periodSeconds % DAY === 0
      ? `${periodSeconds / DAY} days`
      : periodSeconds % 3600 === 0
        ? `${periodSeconds / 3600} hours`
        : `${periodSeconds} seconds`;
  return `per ${unit}, periods counted from ${utcDateTime(new Date(startsAt * 1000))}`;
}

/** One sentence: "Up to 0.01 ETH per day, the day starting at 14:05 UTC, to 0x…; at most 3 payments in all; until …". */
export function describeDelegation(meaning: DelegationMeaning, asset: AssetNames, now: number): string {
  const amount = `${formatUnits(meaning.perPeriod, asset.decimals)} ${asset.symbol}`;
  // whole addresses: a shortened one is what address-poisoning attacks imitate
  const recipients = meaning.recipients.join(", ");
  const parts = [
    `Up to ${amount} ${periodWords(meaning.periodSeconds, meaning.startsAt)}`,
    `to ${meaning.recipients.length > 1 ? `any of ${recipients}` : recipients}`,
  ];
  // a start within the minute (a chain's clock runs a little ahead) is not worth a clause
  if (meaning.startsAt > now + 60) parts.push(`from ${utcDateTime(new Date(meaning.startsAt * 1000))}`);
  if (meaning.notBefore) parts.push(`not before ${utcDateTime(new Date(meaning.notBefore * 1000))}`);
  // counted over the allowance's whole life, not per period
  const transfers = `at most ${meaning.transactions} payment${meaning.transactions === 1 ? "" : "s"} in all`;
  return `${parts.join(", ")}; ${transfers}; until ${utcDateTime(new Date(meaning.expiresAt * 1000))}.`;
}
