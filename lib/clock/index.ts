/**
 * The source of "now". Domain functions take a Clock so that tests can decide
 * expiry without sleeping; production uses the system clock.
 */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

export function addSeconds(date: Date, seconds: number): Date {
  return new Date(date.getTime() + seconds * 1000);
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/**
 * "at 14:05 UTC" when `at` falls on today's date in UTC, else "on 30 Nov at 09:00 UTC" (with the year when it is not
 * this one): when something happens, for a reader who must not mistake tomorrow morning for this morning.
 */
export function atUtc(at: Date, now: Date): string {
  if (at.toISOString().slice(0, 10) === now.toISOString().slice(0, 10)) return `at ${utcTime(at)}`;
  const year = at.getUTCFullYear() === now.getUTCFullYear() ? "" : ` ${at.getUTCFullYear()}`;
  return `on ${at.getUTCDate()} ${MONTHS[at.getUTCMonth()]}${year} at ${utcTime(at)}`;
}

/** "14:05 UTC" */
export function utcTime(at: Date): string {
  return `${String(at.getUTCHours()).padStart(2, "0")}:${String(at.getUTCMinutes()).padStart(2, "0")} UTC`;
}

/** "2026-11-27 14:05 UTC" */
export function utcDateTime(at: Date): string {
  return `${at.toISOString().slice(0, 10)} ${utcTime(at)}`;
}

/** "in 2 hours", "3 days ago": how far `at` is from `now`, in the largest whole unit. */
export function fromNow(at: Date, now: Date = new Date()): string {
  const seconds = Math.round((at.getTime() - now.getTime()) / 1000);
  const units = [
    ["day", 86_400],
    ["hour", 3_600],
    ["minute", 60],
  ] as const;
  const [unit, size] = units.find(([, length]) => Math.abs(seconds) >= length) ?? (["second", 1] as const);
  return new Intl.RelativeTimeFormat("en", { numeric: "auto" }).format(Math.round(seconds / size), unit);
}
