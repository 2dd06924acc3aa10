"use client";

import type { Contact } from "@/lib/wallet/address-book";
import { ASK_FOR_EVERYTHING, LimitsPicker, policyOfChoice, type LimitsChoice } from "./limits-picker";

export type PickableCredential = { id: string; name: string; kind: "evm" | "evm_watch"; address: string };
type Entry = { included: boolean; mode: "read" | "approve" } & LimitsChoice;
export type GrantChoice = Record<string, Entry>;

const NEW_ENTRY: Entry = { included: false, mode: "read", ...ASK_FOR_EVERYTHING };

export function emptyChoice(credentials: PickableCredential[]): GrantChoice {
  return Object.fromEntries(credentials.map((credential) => [credential.id, NEW_ENTRY]));
}

/** The grant set to send: per included credential its mode and, for approve, the spending policy it was given. */
export function chosenGrantSet(choice: GrantChoice) {
  return Object.entries(choice)
    .filter(([, entry]) => entry.included)
    .map(([credentialId, entry]) => ({ credentialId, mode: entry.mode, policy: entry.mode === "approve" ? policyOfChoice(entry) : {} }));
}

function shortAddress(address: string) {
  return `${address.slice(0, 6)}…${address.slice(-4)}`;
}

/** Which credentials to grant, and per credential read or approve (default read). */
export function GrantSetPicker({
  credentials,
  choice,
  onChange,
  contacts,
}: {
  credentials: PickableCredential[];
  choice: GrantChoice;
  onChange: (next: GrantChoice) => void;
  contacts: Contact[];
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
            {entry.included && entry.mode === "approve" && (
              <LimitsPicker credentialId={credential.id} name={credential.name} choice={entry} onChange={update} contacts={contacts} />
            )}
          </li>
        );
      })}
    </ul>
  );
}
