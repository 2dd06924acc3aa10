"use client";

import type { Policy } from "@/contract";
import type { Contact } from "@/lib/wallet/address-book";
import { ContactPicks } from "./contact-picks";
import { tokensAt, useContractTokens } from "./contract-tokens";
import {
  coinNote,
  contractsIn,
  customLimitsOf,
  customPolicy,
  NO_CUSTOM_LIMITS,
  POLICY_PRESETS,
  presetOf,
  presetPolicy,
  type CustomLimits,
  type NativeCoin,
  type PickableToken,
  type PresetKey,
  type TokenCapChoice,
} from "@/lib/wallet/policy-presets";

/**
 * The spending limits chosen for one credential: a preset, or every rule written out. `custom.noUnlimitedApprovals`
 * is the box beside either.
 */
export type LimitsChoice = { limits: PresetKey | "custom"; custom: CustomLimits };

/** New limits ask for everything and refuse unlimited approvals: the box starts checked, in view, and can be unchecked. */
export const NEW_LIMITS: LimitsChoice = { limits: "ask", custom: { ...NO_CUSTOM_LIMITS, noUnlimitedApprovals: true } };

/**
 * The rules a choice means (throws with the field at fault when a custom field is not valid), once the tokens its caps
 * name by contract have said their units.
 */
export async function policyOfChoice(choice: LimitsChoice): Promise<Policy> {
  if (choice.limits !== "custom") return presetPolicy(choice.limits, choice.custom.noUnlimitedApprovals);
  return customPolicy(choice.custom, await tokensAt(contractsIn(choice.custom.tokens)));
}

/** A stored policy as the choice that writes it: its preset, or the custom form filled in (`known` tokens by name). */
export function choiceOfPolicy(policy: Policy, known: PickableToken[] = []): LimitsChoice {
  return { limits: presetOf(policy), custom: customLimitsOf(policy, known) };
}

type TextRule = { [K in keyof CustomLimits]: CustomLimits[K] extends string ? K : never }[keyof CustomLimits];

/** "USDC", or "USDC on chain 8453" when the same symbol is offered on several chains. */
function tokenName(token: PickableToken, offered: PickableToken[]): string {
  const twins = offered.filter((other) => other.symbol === token.symbol).length;
  return twins > 1 ? `${token.symbol} on chain ${token.chainId}` : token.symbol;
}

/** The spending limits of one approve-mode credential; every field is labelled with the credential's name. */
export function LimitsPicker({
  credentialId,
  name,
  choice,
  onChange,
  contacts,
  coin,
  tokens = [],
}: {
  credentialId: string;
  name: string;
  choice: LimitsChoice;
  onChange: (next: LimitsChoice) => void;
  /** The address book, offered as allowed recipients in one click. */
  contacts: Contact[];
  /** The configured chains' coin, which the amounts are in. */
  coin: NativeCoin;
  /** tokens the wallets may hold: their caps are picked by name and typed in their units */
  tokens?: PickableToken[];
}) {
  const named = contractsIn(choice.custom.tokens);
  const reads = useContractTokens(named);
  const custom = (patch: Partial<CustomLimits>) => onChange({ ...choice, custom: { ...choice.custom, ...patch } });
  const caps = choice.custom.tokenCaps;
  const setCap = (index: number, patch: Partial<TokenCapChoice>) =>
    custom({ tokenCaps: caps.map((cap, i) => (i === index ? { ...cap, ...patch } : cap)) });
  const field = (
    rule: TextRule,
    label: string,
    options: { rows?: number; placeholder?: string; inputMode?: "decimal" | "numeric"; size?: number } = {},
  ) => {
    const id = `${rule}-${credentialId}`;
    const props = { id, value: choice.custom[rule], placeholder: options.placeholder };
    return (
      <>
        <label htmlFor={id}>
          {label} for {name}
        </label>
        {options.rows ? (
          <textarea {...props} rows={options.rows} onChange={(event) => custom({ [rule]: event.target.value })} />
        ) : (
          <input
            {...props}
            size={options.size}
            inputMode={options.inputMode}
            onChange={(event) => custom({ [rule]: event.target.value })}
          />
        )}
      </>
    );
  };
  const toggle = (rule: "signMessage" | "noUnlimitedApprovals", label: string) => {
    const checked = choice.custom[rule];
    return (
      <label className="inline">
        <input type="checkbox" checked={checked} onChange={(event) => custom({ [rule]: event.target.checked })} /> {label} for {name}
      </label>
    );
  };
  return (
    <div className="limits">
      <label htmlFor={`limits-${credentialId}`}>Spending limits for {name}</label>
      <select
        id={`limits-${credentialId}`}
        value={choice.limits}
        onChange={(event) => onChange({ ...choice, limits: event.target.value as LimitsChoice["limits"] })}
      >
        {Object.entries(POLICY_PRESETS).map(([key, preset]) => (
          <option key={key} value={key}>
            {preset.label(coin)}
          </option>
        ))}
        <option value="custom">Custom</option>
      </select>
      {toggle("noUnlimitedApprovals", "Refuse unlimited approvals")}
      <p className="muted small">
        Checked, the agent cannot ask for an unlimited token approval, nor for a call or typed data this wallet cannot read (allow its
        contract under Custom to let it ask).
      </p>
      {choice.limits === "custom" && (
        <div className="stack">
          {field("perTransaction", `Per transaction ${coinNote(coin)}`, { inputMode: "decimal", size: 12 })}
          {field("perDay", `Per day ${coinNote(coin)}`, { inputMode: "decimal", size: 12 })}
          {field("perWeek", `Per week ${coinNote(coin)}`, { inputMode: "decimal", size: 12 })}
          {field("recipients", "Allowed recipients", { rows: 2, placeholder: "0x… one per line; empty: anyone" })}
          <ContactPicks
            contacts={contacts}
            recipients={choice.custom.recipients}
            label={(contact) => `Allow ${contact.label} for ${name}`}
            onChange={(recipients) => custom({ recipients })}
          />
          <details>
            <summary>More rules for {name}</summary>
            <div className="stack">
              {field("chains", "Allowed chains", { placeholder: "e.g. 1, 8453; empty: any", size: 26 })}
              {field("contracts", "Allowed contracts", { rows: 2, placeholder: "0x… [0xselector …] one per line; empty: any" })}
              {caps.map((cap, index) => {
                const capId = (part: string) => `token-cap-${part}-${index}-${credentialId}`;
                const amount = (part: "perTransaction" | "perDay", words: string) => (
                  <>
                    <label htmlFor={capId(part)}>
                      Token cap {index + 1} {words} for {name}
                    </label>
                    <span>
                      <input
                        id={capId(part)}
                        inputMode="decimal"
                        size={12}
                        placeholder="none"
                        value={cap[part]}
                        onChange={(event) => setCap(index, { [part]: event.target.value })}
                      />{" "}
                      <span className="muted">{cap.token.symbol}</span>
                    </span>
                  </>
                );
                return (
                  <div key={index} className="stack">
                    <label htmlFor={capId("token")}>
                      Token cap {index + 1} for {name}
                    </label>
                    <select
                      id={capId("token")}
                      value={tokens.findIndex((token) => token.chainId === cap.token.chainId && token.address === cap.token.address)}
                      onChange={(event) => setCap(index, { token: tokens[Number(event.target.value)] })}
                    >
                      {tokens.map((token, option) => (
                        <option key={`${token.chainId}:${token.address}`} value={option}>
                          {tokenName(token, tokens)}
                        </option>
                      ))}
                    </select>
                    {amount("perTransaction", "per transaction")}
                    {amount("perDay", "per day")}
                    <button type="button" className="small" onClick={() => custom({ tokenCaps: caps.filter((_, i) => i !== index) })}>
                      Remove token cap {index + 1} for {name}
                    </button>
                  </div>
                );
              })}
              {tokens.length > 0 && (
                <button
                  type="button"
                  className="small"
                  onClick={() => custom({ tokenCaps: [...caps, { token: tokens[0], perTransaction: "", perDay: "" }] })}
                >
                  Add a token cap for {name}
                </button>
              )}
              {field("tokens", tokens.length ? "Other token caps" : "Token caps", {
                rows: 2,
                placeholder: "chain id, contract, per transaction, per day",
              })}
              <p className="muted small">
                For a token {tokens.length ? "not listed above" : "by its contract"}: one a line, its chain id, its contract, then the caps
                per transaction and per day in the token&apos;s units, like 0.75 (- for none).
              </p>
              {named.length > 0 && (
                <ul className="small" aria-label={`Tokens by contract for ${name}`}>
                  {named.map(({ chainId, address }, index) => (
                    <li key={index}>
                      <span className="mono">{address}</span> on chain {chainId}:{" "}
                      {!reads[index] ? (
                        "reading its contract…"
                      ) : "token" in reads[index] ? (
                        <>
                          caps in <strong>{reads[index].token.symbol}</strong>
                        </>
                      ) : (
                        <span role="alert" className="error">
                          {reads[index].error}; its cap cannot be saved
                        </span>
                      )}
                    </li>
                  ))}
                </ul>
              )}
              {choice.custom.unreadCaps.length > 0 && (
                <p className="muted small">
                  Kept as saved, in their smallest units (their contracts did not say their units):{" "}
                  {choice.custom.unreadCaps.map((cap) => `${cap.token} on chain ${cap.chain_id}`).join(", ")}.
                </p>
              )}
              {field("typedDataContracts", "Typed data contracts", { rows: 2, placeholder: "verifyingContract 0x… one per line" })}
              {field("typedDataNames", "Typed data names", { rows: 2, placeholder: "domain names, one per line" })}
              {field("requestsPerHour", "Requests per hour", { inputMode: "numeric", size: 6 })}
              {toggle("signMessage", "Allow message signing")}
            </div>
          </details>
        </div>
      )}
      <p className="muted small">Requests beyond these limits are refused before they reach you; the rest still wait for your passkey.</p>
    </div>
  );
}
