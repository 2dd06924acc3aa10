"use client";

// The allowance picker and the one tap that signs what it stated, with the Delegation Framework's code (several
// hundred KB): loaded only once the person chooses the allowance mode (allowance-form.tsx), so that consent and
// /clients are usable before it arrives on a slow phone.
import { useState } from "react";
import { privateKeyToAccount } from "viem/accounts";
import { callApi, messageOf } from "@/components/browser/api";
import { assertForSeals } from "@/components/browser/passkey";
import { delegationFromJson, delegationToJson } from "@/lib/allowances/caveats";
import { allowanceBinding, readAllowanceToSign, signAllowance, type AllowanceToSign } from "@/lib/allowances/signing";
import { describeDelegation } from "@/lib/allowances/wording";
import type { AllowanceChoicesInput, PreparedAllowance, SignedAllowance } from "@/lib/allowances/ceremony";
import type { Contact } from "@/lib/wallet/address-book";
import { unsealPrivateKey } from "@/lib/wallet/seal";
import { ContactPicks } from "./contact-picks";
import type { AllowanceChain, AllowanceForm, AllowanceReview } from "./allowance-types";
import type { PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";

function choicesOf(credentialId: string, form: AllowanceForm): AllowanceChoicesInput {
  return {
    credentialId,
    chainId: form.chainId,
    coin: form.coin.trim() || undefined,
    tokens: form.tokens.filter((token) => token.address.trim()).map((token) => ({ address: token.address.trim(), amount: token.amount })),
    recipients: form.recipients.split(/[\s,]+/).filter(Boolean),
    period: form.period,
    expiresInDays: Number(form.expiresInDays),
    transactions: Number(form.transactions),
    overLimit: form.overLimit,
  };
}

function toSign(prepared: PreparedAllowance): AllowanceToSign {
  return {
    framework: prepared.framework,
    chainId: prepared.chainId,
    delegate: prepared.delegate,
    delegations: prepared.delegations.map(delegationFromJson),
    authorizationNonce: prepared.authorizationNonce,
  };
}

/**
 * The allowance in plain words, decoded from the fields the person's key will sign (never from what the server says
 * they mean): anything readAllowanceToSign refuses — an unknown enforcer, no caveats — throws, and nothing is signed.
 */
function wordsOf(prepared: PreparedAllowance, chain: AllowanceChain | undefined): string[] {
  const meanings = readAllowanceToSign(prepared.address, toSign(prepared));
  const now = Math.floor(Date.now() / 1000);
  const lines = meanings.map((meaning) => {
    const named = prepared.assets.find((asset) => asset.token === meaning.token);
    // the symbol is the token's own word for itself; the contract it names is what is signed
    const asset = meaning.token
      ? { symbol: named?.symbol ?? meaning.token, decimals: named?.decimals ?? 0 }
      : { symbol: chain?.symbol ?? "of the chain's coin", decimals: 18 };
    const words = describeDelegation(meaning, asset, now);
    return meaning.token ? `${words} Token contract: ${meaning.token}.` : words;
  });
  lines.push(
    prepared.overLimit === "ask"
      ? "Anything above it comes to you as a request to approve with your passkey."
      : "Anything above it is refused.",
    `Only Agent Wallet's delegate key ${prepared.delegate} can spend it, on ${chain?.name ?? `chain ${prepared.chainId}`}.`,
    // the revocation is built in this page from these same delegations (signAllowance), nothing else
    `You also sign its revocation, which Agent Wallet sends when you revoke it or its access ends; it can only disable ` +
      `${meanings.length === 1 ? "this allowance's delegation" : `these ${meanings.length} delegations`}, and Agent Wallet pays its fee.`,
  );
  if (prepared.authorizationNonce !== null) {
    lines.push(
      `Once on this chain, your address ${prepared.address} takes the code of MetaMask's EIP7702StatelessDeleGator ` +
        `(${prepared.framework.implementations.EIP7702StatelessDeleGatorImpl}) so that the chain can enforce the allowance; ` +
        "Agent Wallet pays the fee.",
    );
  }
  return lines;
}

/**
 * The one tap: the server's passkey options for what was reviewed (`optionsFor` asks with its binding), then the
 * passkey that sealed the key answers their challenge and, through PRF, unseals the key in this page's memory; the key
 * signs exactly what was reviewed.
 */
export async function signReviewedAllowance(
  prepared: PreparedAllowance,
  optionsFor: (binding: ReturnType<typeof allowanceBinding>) => Promise<PublicKeyCredentialRequestOptionsJSON>,
): Promise<{ assertion: AuthenticationResponseJSON; allowance: SignedAllowance }> {
  const options = await optionsFor(allowanceBinding(prepared));
  const { response, prfOutput, seal } = await assertForSeals(options, prepared.seals);
  let privateKey: `0x${string}`;
  try {
    privateKey = await unsealPrivateKey({ ...seal, prfOutput, credentialId: prepared.credentialId, address: prepared.address });
  } finally {
    prfOutput.fill(0);
  }
  const signed = await signAllowance(privateKeyToAccount(privateKey), toSign(prepared));
  const authorization = signed.authorization;
  return {
    assertion: response,
    allowance: {
      chainId: prepared.chainId,
      overLimit: prepared.overLimit,
      delegations: signed.delegations.map(delegationToJson),
      authorization: authorization && {
        address: authorization.address,
        chainId: authorization.chainId,
        nonce: authorization.nonce,
        r: authorization.r,
        s: authorization.s,
        yParity: authorization.yParity === 1 ? 1 : 0,
      },
      revocation: signed.revocation,
    },
  };
}

/** The allowance of one wallet: its limits in the person's units, then the review in words before the passkey tap. */
export function AllowancePicker({
  credential,
  chains,
  form,
  review,
  onChange,
  contacts,
  scope = credential.id,
}: {
  credential: { id: string; name: string; address: string };
  /** what makes its fields' ids unique on the page: /clients may show several pickers for one wallet */
  scope?: string;
  chains: AllowanceChain[];
  form: AllowanceForm;
  review: AllowanceReview | undefined;
  /** a changed form drops its review: only what was reviewed may be signed */
  onChange: (form: AllowanceForm, review?: AllowanceReview) => void;
  contacts: Contact[];
}) {
  const [busy, setBusy] = useState(false);
  const name = credential.name;
  const id = (field: string) => `allowance-${field}-${scope}`;
  const chain = chains.find((candidate) => candidate.id === form.chainId);
  const set = (patch: Partial<AllowanceForm>) => onChange({ ...form, ...patch });

  async function prepare() {
    setBusy(true);
    try {
      const prepared = await callApi<PreparedAllowance>("/api/allowances/prepare", choicesOf(credential.id, form));
      onChange(form, { prepared, words: wordsOf(prepared, chain) });
    } catch (error) {
      onChange(form, { error: messageOf(error) });
    } finally {
      setBusy(false);
    }
  }

  const text = (field: keyof AllowanceForm & string, label: string, inputMode: "decimal" | "numeric", placeholder?: string) => (
    <>
      <label htmlFor={id(field)}>
        {label} for {name}
      </label>
      <input
        id={id(field)}
        inputMode={inputMode}
        placeholder={placeholder}
        value={form[field] as string}
        onChange={(event) => set({ [field]: event.target.value })}
      />
    </>
  );

  return (
    <div className="limits stack">
      <p className="muted small">
        Pays small amounts by itself, within an allowance you sign now: the chain enforces it, so not even Agent Wallet can spend more.
      </p>
      {chains.length > 1 && (
        <>
          <label htmlFor={id("chain")}>Allowance chain for {name}</label>
          <select id={id("chain")} value={form.chainId} onChange={(event) => set({ chainId: Number(event.target.value) })}>
            {chains.map((option) => (
              <option key={option.id} value={option.id}>
                {option.name}
              </option>
            ))}
          </select>
        </>
      )}
      {text("coin", `${chain?.symbol ?? "Coin"} per period`, "decimal", "empty: none")}
      {form.tokens.map((token, index) => (
        <div key={index} className="stack">
          <label htmlFor={id(`token-${index}`)}>
            Token {index + 1} contract for {name}
          </label>
          <input
            id={id(`token-${index}`)}
            className="mono"
            placeholder="0x…"
            value={token.address}
            onChange={(event) => set({ tokens: form.tokens.map((t, i) => (i === index ? { ...t, address: event.target.value } : t)) })}
          />
          <label htmlFor={id(`token-amount-${index}`)}>
            Token {index + 1} per period for {name}
          </label>
          <input
            id={id(`token-amount-${index}`)}
            inputMode="decimal"
            value={token.amount}
            onChange={(event) => set({ tokens: form.tokens.map((t, i) => (i === index ? { ...t, amount: event.target.value } : t)) })}
          />
        </div>
      ))}
      <button type="button" className="small" onClick={() => set({ tokens: [...form.tokens, { address: "", amount: "" }] })}>
        Add a token for {name}
      </button>
      <label htmlFor={id("recipients")}>Allowed recipients for {name}</label>
      <textarea
        id={id("recipients")}
        rows={2}
        className="mono"
        placeholder="0x… one per line"
        value={form.recipients}
        onChange={(event) => set({ recipients: event.target.value })}
      />
      <ContactPicks
        contacts={contacts}
        recipients={form.recipients}
        label={(contact) => `Let ${name} pay ${contact.label}`}
        onChange={(recipients) => set({ recipients })}
      />
      <label htmlFor={id("period")}>Allowance period for {name}</label>
      <select id={id("period")} value={form.period} onChange={(event) => set({ period: event.target.value as AllowanceForm["period"] })}>
        <option value="hour">per hour</option>
        <option value="day">per day</option>
        <option value="week">per week</option>
      </select>
      {text("expiresInDays", "Days until the allowance ends (at most 30)", "numeric")}
      {text("transactions", "Number of payments in all", "numeric")}
      <label htmlFor={id("over")}>Above the allowance for {name}</label>
      <select
        id={id("over")}
        value={form.overLimit}
        onChange={(event) => set({ overLimit: event.target.value as AllowanceForm["overLimit"] })}
      >
        <option value="ask">Ask me</option>
        <option value="refuse">Refuse</option>
      </select>
      <button type="button" onClick={() => void prepare()} disabled={busy}>
        Review allowance for {name}
      </button>
      {review &&
        ("error" in review ? (
          <p role="alert" className="error">
            Nothing will be signed: {review.error}
          </p>
        ) : (
          <section aria-label={`Allowance you sign for ${name}`}>
            <h3>The allowance you sign for {name}</h3>
            <ul>
              {review.words.map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
          </section>
        ))}
    </div>
  );
}
