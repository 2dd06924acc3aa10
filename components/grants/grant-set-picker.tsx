"use client";

export type PickableCredential = { id: string; name: string; kind: "evm" | "evm_watch"; address: string };
export type GrantChoice = Record<string, { included: boolean; mode: "read" | "approve" }>;

export function emptyChoice(credentials: PickableCredential[]): GrantChoice {
  return Object.fromEntries(credentials.map((credential) => [credential.id, { included: false, mode: "read" as const }]));
}

export function chosenGrantSet(choice: GrantChoice) {
  return Object.entries(choice)
    .filter(([, entry]) => entry.included)
    .map(([credentialId, entry]) => ({ credentialId, mode: entry.mode }));
}

function shortAddress(address: string) {
  return `${address.slice(0, 6)}…${address.slice(-4)}`;
}

/** Which credentials to grant, and per credential read or approve (default read). */
export function GrantSetPicker({ credentials, choice, onChange }: { credentials: PickableCredential[]; choice: GrantChoice; onChange: (next: GrantChoice) => void }) {
  return (
    <ul className="rows grant-set">
      {credentials.map((credential) => {
        const entry = choice[credential.id] ?? { included: false, mode: "read" as const };
        const update = (patch: Partial<typeof entry>) => onChange({ ...choice, [credential.id]: { ...entry, ...patch } });
        return (
          <li key={credential.id} className="row">
            <div>
              <input id={`grant-${credential.id}`} type="checkbox" checked={entry.included} onChange={(event) => update({ included: event.target.checked })} />{" "}
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
          </li>
        );
      })}
    </ul>
  );
}
