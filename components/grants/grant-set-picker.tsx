"use client";

import { customPolicy, POLICY_PRESETS, type CustomLimits } from "@/lib/wallet/policy-presets";

export type PickableCredential = { id: string; name: string; kind: "evm" | "evm_watch"; address: string };
type Limits = keyof typeof POLICY_PRESETS | "custom";
type Entry = { included: boolean; mode: "read" | "approve"; limits: Limits; custom: CustomLimits };
export type GrantChoice = Record<string, Entry>;

const NEW_ENTRY: Entry = { included: false, mode: "read", limits: "ask", custom: { perTransaction: "", perDay: "", recipients: "" } };

export function emptyChoice(credentials: PickableCredential[]): GrantChoice {
  return Object.fromEntries(credentials.map((credential) => [credential.id, NEW_ENTRY]));
}

/** The grant set to send: per included credential its mode and, for approve, the spending policy it was given. */
export function chosenGrantSet(choice: GrantChoice) {
  return Object.entries(choice)
    .filter(([, entry]) => entry.included)
    .map(([credentialId, entry]) => ({
      credentialId,
      mode: entry.mode,
      policy: entry.mode !== "approve" ? {} : entry.limits === "custom" ? customPolicy(entry.custom) : POLICY_PRESETS[entry.limits].policy,
    }));
}

/** The spending limits of one approve-mode credential: a preset, or custom amounts and recipients. */
function LimitsPicker({
  credential,
  entry,
  update,
}: {
  credential: PickableCredential;
  entry: Entry;
  update: (patch: Partial<Entry>) => void;
}) {
  const custom = (patch: Partial<CustomLimits>) => update({ custom: { ...entry.custom, ...patch } });
  return (
    <div className="limits">
      <label htmlFor={`limits-${credential.id}`}>Spending limits for {credential.name}</label>
      <select id={`limits-${credential.id}`} value={entry.limits} onChange={(event) => update({ limits: event.target.value as Limits })}>
        {Object.entries(POLICY_PRESETS).map(([key, preset]) => (
          <option key={key} value={key}>
            {preset.label}
          </option>
        ))}
        <option value="custom">Custom</option>
      </select>
      {entry.limits === "custom" && (
        <div className="stack">
          <label htmlFor={`per-tx-${credential.id}`}>Per transaction (ETH) for {credential.name}</label>
          <input
            id={`per-tx-${credential.id}`}
            inputMode="decimal"
            value={entry.custom.perTransaction}
            onChange={(event) => custom({ perTransaction: event.target.value })}
          />
          <label htmlFor={`per-day-${credential.id}`}>Per day (ETH) for {credential.name}</label>
          <input
            id={`per-day-${credential.id}`}
            inputMode="decimal"
            value={entry.custom.perDay}
            onChange={(event) => custom({ perDay: event.target.value })}
          />
          <label htmlFor={`recipients-${credential.id}`}>Allowed recipients for {credential.name}</label>
          <textarea
            id={`recipients-${credential.id}`}
            rows={2}
            placeholder="0x… one per line; empty: anyone"
            value={entry.custom.recipients}
            onChange={(event) => custom({ recipients: event.target.value })}
          />
        </div>
      )}
      <p className="muted small">Requests beyond these limits are refused before they reach you; the rest still wait for your passkey.</p>
    </div>
  );
}

function shortAddress(address: string) {
  return `${address.slice(0, 6)}…${address.slice(-4)}`;
}

/** Which credentials to grant, and per credential read or approve (default read). */
export function GrantSetPicker({
  credentials,
  choice,
  onChange,
}: {
  credentials: PickableCredential[];
  choice: GrantChoice;
  onChange: (next: GrantChoice) => void;
}) {
  return (
    <ul className="rows grant-set">
      {credentials.map((credential) => {
        const entry = choice[credential.id] ?? NEW_ENTRY;
        const update = (patch: Partial<typeof entry>) => onChange({ ...choice, [credential.id]: { ...entry, ...patch } });
        return (
          <li key={credential.id} className="row">
            <div>
              <input
                id={`grant-${credential.id}`}
                type="checkbox"
                checked={entry.included}
                onChange={(event) => update({ included: event.target.checked })}
              />{" "}
              <label htmlFor={`grant-${credential.id}`} className="inline">
                {credential.name}
              </label>
              <div className="mono small" title={credential.address}>
                {shortAddress(credential.address)} {credential.kind === "evm_watch" && <span className="badge">watch-only</span>}
              </div>
            </div>
            <div>
              <label htmlFor={`mode-${credential.id}`} className="visually-hidden">
                Approval mode for {credential.name}
              </label>
              <select
                id={`mode-${credential.id}`}
                value={entry.mode}
                disabled={!entry.included}
                onChange={(event) => update({ mode: event.target.value as "read" | "approve" })}
              >
                <option value="read">read</option>
                <option value="approve" disabled={credential.kind === "evm_watch"}>
                  approve
                </option>
              </select>
            </div>
            {entry.included && entry.mode === "approve" && <LimitsPicker credential={credential} entry={entry} update={update} />}
          </li>
        );
      })}
    </ul>
  );
}
