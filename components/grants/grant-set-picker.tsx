"use client";

import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import type { Contact } from "@/lib/wallet/address-book";
import { startAuthentication } from "@/components/browser/passkey";
import type { NativeCoin, PickableToken } from "@/lib/wallet/policy-presets";
import { NEW_LIMITS, LimitsPicker, policyOfChoice, type LimitsChoice } from "./limits-picker";
import { AllowancePicker, loadAllowanceSigning, newAllowanceForm, reviewedAllowance } from "./allowance-form";
import type { AllowanceChain, AllowanceForm, AllowanceReview } from "./allowance-types";

export type PickableCredential = { id: string; name: string; kind: "evm" | "evm_watch"; address: string };
type Mode = "read" | "approve" | "allowance";
type Entry = { included: boolean; mode: Mode; allowance: AllowanceForm; review?: AllowanceReview } & LimitsChoice;
export type GrantChoice = Record<string, Entry>;

const NEW_ENTRY: Entry = { included: false, mode: "read", allowance: newAllowanceForm([]), ...NEW_LIMITS };

/** Every credential left out, in read mode; an allowance, if chosen, on the first chain that offers one. */
export function emptyChoice(credentials: PickableCredential[], chains: AllowanceChain[] = []): GrantChoice {
  const entry = { ...NEW_ENTRY, allowance: newAllowanceForm(chains) };
  return Object.fromEntries(credentials.map((credential) => [credential.id, entry]));
}

/** The grant set to send: per included credential its mode and, for approve, the spending policy it was given. */
function chosenGrantSet(choice: GrantChoice) {
  return Promise.all(
    Object.entries(choice)
      .filter(([, entry]) => entry.included)
      .map(async ([credentialId, entry]) => ({
        credentialId,
        mode: entry.mode,
        policy: entry.mode === "approve" ? await policyOfChoice(entry) : {},
      })),
  );
}

type ChosenEntry = Awaited<ReturnType<typeof chosenGrantSet>>[number];

/**
 * One passkey tap approving a grant set (at consent, or issuing an API key): `options` gets the challenge bound to the
 * set, `submit` sends the set with the assertion. With an allowance in it, the challenge is bound to the delegations'
 * hashes and the same tap unseals the wallet's key, which signs exactly the allowance the page stated in words.
 */
export async function approveGrantSet<T>(
  choice: GrantChoice,
  options: (credentials: (ChosenEntry & { allowance?: unknown })[]) => Promise<PublicKeyCredentialRequestOptionsJSON>,
  submit: (credentials: (ChosenEntry & { allowance?: unknown })[], assertion: AuthenticationResponseJSON) => Promise<T>,
): Promise<T> {
  const grantSet = await chosenGrantSet(choice);
  const withAllowance = grantSet.find((entry) => entry.mode === "allowance");
  if (!withAllowance) {
    const optionsJSON = await options(grantSet);
    return submit(grantSet, (await startAuthentication({ optionsJSON })) as AuthenticationResponseJSON);
  }
  const prepared = reviewedAllowance(choice[withAllowance.credentialId].review);
  const withEntry = (allowance: unknown) =>
    grantSet.map((entry) => (entry.credentialId === withAllowance.credentialId ? { ...entry, allowance } : entry));
  const { signReviewedAllowance } = await loadAllowanceSigning();
  const { assertion, allowance } = await signReviewedAllowance(prepared, (binding) => options(withEntry(binding)));
  return submit(withEntry(allowance), assertion);
}

/** What each mode lets the client do, below its select: the options' own words stay short enough for a phone. */
const MODE_HELP: Record<Mode, string> = {
  read: "Read: can see balances and addresses only.",
  approve: "Approve: can ask you to approve each signature.",
  allowance: "Allowance: pays small amounts by itself, within an allowance you sign.",
};

function shortAddress(address: string) {
  return `${address.slice(0, 6)}…${address.slice(-4)}`;
}

/**
 * Which credentials to grant, and per credential read, approve or — given chains that offer it — allowance
 * (default read).
 */
export function GrantSetPicker({
  credentials,
  choice,
  onChange,
  contacts,
  coin,
  allowanceChains = [],
  tokens,
}: {
  credentials: PickableCredential[];
  choice: GrantChoice;
  onChange: (next: GrantChoice) => void;
  contacts: Contact[];
  coin: NativeCoin;
  allowanceChains?: AllowanceChain[];
  /** tokens the wallets may hold, offered by name for token caps and allowances */
  tokens?: PickableToken[];
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
                aria-describedby={`mode-help-${credential.id}`}
                value={entry.mode}
                disabled={!entry.included}
                onChange={(event) => update({ mode: event.target.value as Mode })}
              >
                <option value="read">Read only</option>
                <option value="approve" disabled={credential.kind === "evm_watch"}>
                  Approve each
                </option>
                {credential.kind === "evm" && allowanceChains.length > 0 && <option value="allowance">Allowance</option>}
              </select>
              <p id={`mode-help-${credential.id}`} className="mode-help small muted">
                {MODE_HELP[entry.mode]}
              </p>
            </div>
            {entry.included && entry.mode === "approve" && (
              <LimitsPicker
                credentialId={credential.id}
                name={credential.name}
                choice={entry}
                onChange={update}
                contacts={contacts}
                coin={coin}
                tokens={tokens}
              />
            )}
            {entry.included && entry.mode === "allowance" && (
              <AllowancePicker
                credential={credential}
                chains={allowanceChains}
                form={entry.allowance}
                review={entry.review}
                onChange={(allowance, review) => update({ allowance, review })}
                contacts={contacts}
                tokens={tokens}
              />
            )}
          </li>
        );
      })}
    </ul>
  );
}
