// The spending limits a person picks per credential on the consent screen and when issuing an API key.
// Pure and browser-safe: the picker and the server agree on exactly the rules each choice means.
import { parseEther } from "viem";
import type { Policy } from "@/contract";

export const POLICY_PRESETS = {
  ask: { label: "Ask me for everything", policy: {} },
  small: {
    label: "Up to 0.05 ETH a transaction, 0.2 ETH a day",
    policy: { native: { per_transaction: String(parseEther("0.05")), per_day: String(parseEther("0.2")) } },
  },
} as const satisfies Record<string, { label: string; policy: Policy }>;

export type CustomLimits = { perTransaction: string; perDay: string; recipients: string };

/** A custom choice as rules: amounts in ETH (empty: no limit), recipients one per line or comma-separated. */
export function customPolicy(limits: CustomLimits): Policy {
  const wei = (label: string, ether: string) => {
    if (!/^\d{1,30}(\.\d{1,18})?$/.test(ether)) throw new Error(`${label}: enter an amount in ETH, like 0.05`);
    return String(parseEther(ether));
  };
  const perTransaction = limits.perTransaction.trim();
  const perDay = limits.perDay.trim();
  const native = {
    ...(perTransaction ? { per_transaction: wei("Per transaction", perTransaction) } : {}),
    ...(perDay ? { per_day: wei("Per day", perDay) } : {}),
  };
  const recipients = limits.recipients
    .split(/[\s,]+/)
    .map((entry) => entry.trim())
    .filter(Boolean);
  return { ...(Object.keys(native).length ? { native } : {}), ...(recipients.length ? { recipients } : {}) };
}
