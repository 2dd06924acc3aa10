import { utcDateTime } from "@/lib/clock";

/**
 * When something happened or ends, on the settings screens: "2026-11-27 14:05 UTC", as the allowances' own words and
 * the agent's messages say it, and the same text in the server's render and the browser's (a local time would differ
 * between them by the server's time zone).
 */
export function when(iso: string | null): string {
  return iso ? utcDateTime(new Date(iso)) : "never";
}
