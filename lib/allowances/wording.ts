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

/**
 * One sentence: "Up to 0.01 ETH per day, the day starting at 14:05 UTC, to 0x…; at most 3 payments in all; until …".
 * For any payee, `perPaymentMax` is the server's own limit on one payment (base units), and a second sentence says
 * what the chain alone still holds to if that server were compromised.
 */
export function describeDelegation(meaning: DelegationMeaning, asset: AssetNames, now: number, perPaymentMax?: bigint | null): string {
  const units = (value: bigint) => `${formatUnits(value, asset.decimals)} ${asset.symbol}`;
  const amount = units(meaning.perPeriod);
  const period = periodWords(meaning.periodSeconds, meaning.startsAt);
  // whole addresses: a shortened one is what address-poisoning attacks imitate
  const recipients = meaning.recipients.join(", ");
  const parts = [
    `Up to ${amount} ${period}`,
    meaning.anyPayee
      ? `to any payee${perPaymentMax ? `, at most ${units(perPaymentMax)} per payment` : ""}`
      : `to ${meaning.recipients.length > 1 ? `any of ${recipients}` : recipients}`,
  ];
  // a start within the minute (a chain's clock runs a little ahead) is not worth a clause
  if (meaning.startsAt > now + 60) parts.push(`from ${utcDateTime(new Date(meaning.startsAt * 1000))}`);
  if (meaning.notBefore) parts.push(`not before ${utcDateTime(new Date(meaning.notBefore * 1000))}`);
  // counted over the allowance's whole life, not per period
  const transfers = `at most ${meaning.transactions} payment${meaning.transactions === 1 ? "" : "s"} in all`;
  const sentence = `${parts.join(", ")}; ${transfers}; until ${utcDateTime(new Date(meaning.expiresAt * 1000))}.`;
  if (!meaning.anyPayee) return sentence;
  return `${sentence} ${anyPayeeWords(`${amount} ${periodShort(meaning.periodSeconds)}`, perPaymentMax ? units(perPaymentMax) : null)}`;
}

/** "a day": the period in two words, where the window's start is said elsewhere. */
function periodShort(periodSeconds: number): string {
  return { [3600]: "an hour", [DAY]: "a day", [7 * DAY]: "a week" }[periodSeconds] ?? "per period";
}

/**
 * What the agent's own account means (decision 0035): stock x402 merchants are paid from it, each payment moved into it
 * from the allowance first, so what it holds is past the chain's cap for a while.
 */
const AGENT_ACCOUNT_WORDS =
  "Paid APIs (x402) are paid from an account of the agent's own, filled from this allowance one payment at a time: only " +
  "the server checks whom it pays, and a compromised server could also take what it holds for payments on their way.";

/** What "any payee" means when the one check that is not the chain's fails; `cap` with its period ("5 USDC a day"). */
function anyPayeeWords(cap: string, perPayment: string | null): string {
  return (
    `Any payee: ${perPayment ? `Agent Wallet refuses a payment above ${perPayment}, but ` : ""}if Agent Wallet's server were ` +
    `compromised, anyone could be paid, up to ${cap} and no more. ${AGENT_ACCOUNT_WORDS}`
  );
}

/** One asset of an allowance for its summary: its signed delegations, its names, its cap's value, the server's limit. */
export type SummaryAsset = {
  meanings: DelegationMeaning[];
  asset: AssetNames;
  /** what the cap per period is worth ("$125.00"), or null without a price */
  money: string | null;
  /** for any payee, the most one payment may be (base units) */
  perPaymentMax: bigint | null;
  /** for any payee, the float the agent's account is kept topped up to (base units, decision 0038); absent: none */
  float?: bigint | null;
};

function either(names: string[]): string {
  return names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} or ${names[names.length - 1]}`;
}

/** "0.05 ETH (≈ $125.00) a day": what the allowance may pay each period, every asset's cap, as the summary says it. */
export function allowanceCaps(assets: SummaryAsset[]): string {
  const first = assets[0]?.meanings[0];
  if (!first) return "";
  const cap = (part: SummaryAsset) => {
    const units = `${formatUnits(part.meanings[0].perPeriod, part.asset.decimals)} ${part.asset.symbol}`;
    return part.money ? `${units} (≈ ${part.money})` : units;
  };
  return `${assets.map(cap).join(" and ")} ${periodShort(first.periodSeconds)}`;
}

/**
 * The allowance in the words a person uses: "0.05 ETH (≈ $125.00) a day to Alice, for 7 days, at most 5 payments in
 * all. Stop it any time on Clients." (for any payee, anyPayeeWarning goes beside it). `nameOf` names a payee (from the
 * address book) or gives the whole address. The exact terms are describeDelegation's, one per signed delegation. On
 * Clients itself (`onClients`), a live allowance (`now` in seconds) says the days it has left ("for 6 days left"), an
 * ended one its whole life, and neither says where to stop it.
 */
export function allowanceSummary(assets: SummaryAsset[], nameOf: (address: string) => string, onClients?: { now: number | null }): string {
  const all = assets.flatMap((part) => part.meanings);
  const first = all[0];
  if (!first) return "";
  const anyPayee = all.some((meaning) => meaning.anyPayee);
  const payees = anyPayee
    ? `any payee, at most ${either(
        assets.map((part) => `${formatUnits(part.perPaymentMax ?? 0n, part.asset.decimals)} ${part.asset.symbol}`),
      )} per payment`
    : either([...new Set(all.flatMap((meaning) => meaning.recipients))].map(nameOf));
  const start = Math.max(first.startsAt, first.notBefore);
  const now = onClients?.now ?? null;
  // what is left of a day still counts as a day: the allowance is live through it
  const days =
    now === null
      ? Math.max(1, Math.round((first.expiresAt - start) / DAY))
      : Math.max(1, Math.ceil((first.expiresAt - Math.max(start, now)) / DAY));
  const duration = `for ${days} day${days === 1 ? "" : "s"}${now === null ? "" : " left"}`;
  const caps = allowanceCaps(assets);
  return `${caps} to ${payees}, ${duration}, ${paymentsCounted(assets)}.${onClients ? "" : " Stop it any time on Clients."}`;
}

/**
 * How many payments the chain lets through, as it counts them: each signed delegation has its own count, and there is
 * one per asset, and per payee for named payees. "at most 5 payments in all" with one; "at most 5 payments of each
 * asset to each payee" with several, never a total that is then said to be counted apart.
 */
function paymentsCounted(assets: SummaryAsset[]): string {
  const all = assets.flatMap((part) => part.meanings);
  const count = all[0].transactions;
  const payments = `at most ${count} payment${count === 1 ? "" : "s"}`;
  if (all.length === 1) return `${payments} in all`;
  // the coin's one delegation names all its payees; a token has one per payee (caveats.ts allowanceDelegations)
  const perPayee = assets.map((part) => part.meanings.length > 1);
  if (assets.length === 1) return `${payments} to each payee`;
  if (perPayee.every((each) => each === perPayee[0])) return `${payments} of each asset${perPayee[0] ? " to each payee" : ""}`;
  const of = (part: SummaryAsset, index: number) => `of ${part.asset.symbol}${perPayee[index] ? " to each payee" : ""}`;
  return `${payments} ${assets.map((part, index) => (index === 0 ? of(part, index) : `${count} ${of(part, index)}`)).join(" and ")}`;
}

/**
 * The warning an allowance for any payee carries, apart from its sentence: what the chain alone still holds to if
 * Agent Wallet's server, the one that checks the payees and the most per payment, were compromised; or, when the
 * agent's own key spends it (`delegateKind` agent), if that key were stolen. Null for payee lists.
 */
export function anyPayeeWarning(assets: SummaryAsset[], delegateKind: "server" | "agent" = "server"): string | null {
  if (!assets.some((part) => part.meanings.some((meaning) => meaning.anyPayee))) return null;
  const caps = allowanceCaps(assets);
  // no server checks what the agent's own key signs: the chain holds the cap, the payments and the end, not the payee
  if (delegateKind === "agent")
    return (
      `The agent's own key may pay anyone, up to ${caps} and no more, with no most per payment on chain: whoever stole ` +
      "that key could too. Agent Wallet's server holds no key that can pay from it."
    );
  const floats = assets.flatMap((part) => (part.float ? [`${formatUnits(part.float, part.asset.decimals)} ${part.asset.symbol}`] : []));
  const float = floats.length
    ? ` A compromised server could take the float, up to ${floats.join(" and ")}, and what is left of the cap.`
    : "";
  return `If Agent Wallet's server were compromised, anyone could be paid, up to ${caps} and no more. ${AGENT_ACCOUNT_WORDS}${float}`;
}

/** The float in words, for the consent card and Clients: what the agent's account is kept topped up to, and why. */
export function floatWords(float: bigint, asset: AssetNames): string {
  return (
    `Agent Wallet keeps up to ${formatUnits(float, asset.decimals)} ${asset.symbol} of this allowance in the agent's account, ` +
    "so that paid APIs it covers are answered at once; it counts as spent from the cap once it moves, and you can take it back on Clients."
  );
}
