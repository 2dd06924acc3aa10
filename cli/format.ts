// Human output: aligned tables and key/value blocks (plain text, no colours, so
// it reads the same in a terminal, a log and a pipe).
import { limitsInWords, type PolicyView, type RequestView } from "../sdk";

export type Column<T> = { header: string; value: (row: T) => string };

/** Columns padded to the widest cell; the last column is not padded. */
export function table<T>(rows: T[], columns: Column<T>[]): string {
  const cells = rows.map((row) => columns.map((column) => clean(column.value(row))));
  const widths = columns.map((column, index) => Math.max(column.header.length, ...cells.map((row) => row[index].length)));
  const line = (values: string[]) =>
    values
      .map((value, index) => (index === values.length - 1 ? value : value.padEnd(widths[index])))
      .join("  ")
      .trimEnd();
  return [line(columns.map((column) => column.header)), ...cells.map(line)].join("\n");
}

/** Key/value lines, keys aligned; null and undefined values are left out. */
export function keyValues(entries: [string, string | number | null | undefined][]): string {
  const present = entries.filter(
    (entry): entry is [string, string | number] => entry[1] !== null && entry[1] !== undefined && entry[1] !== "",
  );
  const width = Math.max(0, ...present.map(([key]) => key.length));
  return present.map(([key, value]) => `${`${key}:`.padEnd(width + 1)}  ${clean(String(value))}`).join("\n");
}

/** Control characters from the server never reach the terminal as such. */
export function clean(value: string): string {
  return value.replace(/[\u0000-\u001f\u007f-\u009f]/g, (char) => (char === "\n" ? "\\n" : char === "\t" ? " " : "?"));
}

export function requestDetails(request: RequestView): string {
  return keyValues([
    ["Request", request.request_id],
    ["Kind", request.kind],
    ["Status", request.status],
    ["Credential", request.credential_id],
    ["Chain", request.chain_id],
    ["Approve at", request.status === "pending" ? request.approval_url : null],
    ["Signature", request.signature],
    ["Transaction", request.tx_hash],
    ["Reason", request.reason],
    ["Created", request.created_at],
    ["Expires", request.status === "pending" ? request.expires_at : null],
  ]);
}

export function requestsTable(requests: RequestView[]): string {
  if (!requests.length) return "No requests.";
  return table(requests, [
    { header: "ID", value: (r) => r.request_id },
    { header: "KIND", value: (r) => r.kind },
    { header: "STATUS", value: (r) => r.status },
    { header: "CREDENTIAL", value: (r) => r.credential_id },
    { header: "CREATED", value: (r) => r.created_at },
  ]);
}

/** A credential's grant in a few words: its mode, each rule of its policy in the person's units, and what is left of the rolling caps. */
export function policySummary(view: PolicyView): string {
  if (view.mode === "read") return "read only: no signatures";
  const rules = limitsInWords(view, { left: true, readable: true });
  return rules.length ? rules.join(" · ") : "no limits: you approve each request";
}

/** "in 59 min", "2 h ago": how far `iso` is from `now`, for a token's expiry at a glance. */
export function relativeTime(iso: string, now: Date): string {
  const minutes = Math.round((new Date(iso).getTime() - now.getTime()) / 60_000);
  const span = Math.abs(minutes) < 120 ? `${Math.abs(minutes)} min` : `${Math.round(Math.abs(minutes) / 60)} h`;
  return minutes >= 0 ? `in ${span}` : `${span} ago`;
}
