"use client";

// The allowance picker and the one tap that signs what it stated, with the Delegation Framework's code (several
// hundred KB): loaded only once the person chooses the allowance mode (allowance-form.tsx), so that consent and
// /clients are usable before it arrives on a slow phone.
import { useEffect, useRef, useState } from "react";
import { isAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { callApi, messageOf } from "@/components/browser/api";
import { assertForSeals } from "@/components/browser/passkey";
import { delegationFromJson, delegationToJson } from "@/lib/allowances/caveats";
import { allowanceBinding, readAllowanceToSign, signAllowance, type AllowanceToSign } from "@/lib/allowances/signing";
import { allowanceSummary, anyPayeeWarning, describeDelegation, floatWords, type SummaryAsset } from "@/lib/allowances/wording";
import { moneyText } from "@/lib/prices/format";
import type { AllowanceChoicesInput, PreparedAllowance, SignedAllowance } from "@/lib/allowances/ceremony";
import type { Contact } from "@/lib/wallet/address-book";
import { unsealPrivateKey } from "@/lib/wallet/seal";
import { AllowanceCard } from "./allowance-card";
import { ContactPicks } from "./contact-picks";
import { useContractTokens } from "./contract-tokens";
import type { PickableToken } from "@/lib/wallet/policy-presets";
import type { AllowanceChain, AllowanceForm, AllowanceReview } from "./allowance-types";
import type { PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";

function choicesOf(credentialId: string, form: AllowanceForm): AllowanceChoicesInput {
  const anyPayee = form.payees === "any";
  return {
    credentialId,
    chainId: form.chainId,
    // any payee is for tokens only (its fields hide the coin's and the payees')
    coin: (!anyPayee && form.coin.trim()) || undefined,
    tokens: form.tokens
      .filter((token) => token.address.trim())
      .map((token) => ({
        address: token.address.trim(),
        amount: token.amount,
        ...(anyPayee && { perPayment: token.perPayment }),
        // no float unless one is written: left empty, payments wait for their own funding as before
        ...(anyPayee && token.float.trim() && { float: token.float.trim() }),
      })),
    recipients: anyPayee ? [] : form.recipients.split(/[\s,]+/).filter(Boolean),
    anyPayee,
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
 * The summary says it as a person would, with names from the address book; the words are the exact terms.
 */
export function reviewOf(
  prepared: PreparedAllowance,
  chain: AllowanceChain | undefined,
  contacts: Contact[],
): { summary: string; warning: string | null; words: string[] } {
  const meanings = readAllowanceToSign(prepared.address, toSign(prepared));
  const now = Math.floor(Date.now() / 1000);
  const assetOf = (token: string | null) => {
    const named = prepared.assets.find((asset) => asset.token === token);
    // the symbol is the token's own word for itself; the contract it names is what is signed
    const asset = token
      ? { symbol: named?.symbol ?? token, decimals: named?.decimals ?? 0 }
      : { symbol: chain?.symbol ?? "of the chain's coin", decimals: 18 };
    const price = named?.price ? { answer: BigInt(named.price.answer), decimals: named.price.decimals } : null;
    return { asset, price };
  };
  const perPaymentOf = (token: string | null) => {
    const max = prepared.perPayment.find((entry) => entry.token === token)?.max;
    return max ? BigInt(max) : null;
  };
  const floatOf = (token: string | null) => {
    const float = prepared.perPayment.find((entry) => entry.token === token)?.float;
    return float ? BigInt(float) : null;
  };
  const lines = meanings.map((meaning) => {
    const words = describeDelegation(meaning, assetOf(meaning.token).asset, now, perPaymentOf(meaning.token));
    const float = floatOf(meaning.token);
    const withFloat = float ? `${words} ${floatWords(float, assetOf(meaning.token).asset)}` : words;
    return meaning.token ? `${withFloat} Token contract: ${meaning.token}.` : withFloat;
  });
  const parts: SummaryAsset[] = [...new Set(meanings.map((meaning) => meaning.token))].map((token) => {
    const own = meanings.filter((meaning) => meaning.token === token);
    const { asset, price } = assetOf(token);
    return {
      meanings: own,
      asset,
      money: price && moneyText(own[0].perPeriod, asset.decimals, price, prepared.currency),
      perPaymentMax: perPaymentOf(token),
      float: floatOf(token),
    };
  });
  const nameOf = (address: string) => contacts.find((contact) => contact.address.toLowerCase() === address.toLowerCase())?.label ?? address;
  const summary = allowanceSummary(parts, nameOf);
  lines.push(
    prepared.overLimit === "ask"
      ? "Anything above it comes to you as a request to approve with your passkey."
      : "Anything above it is refused.",
    prepared.delegateKind === "agent"
      ? `Only the agent's own key, address ${prepared.delegate}, can spend it, on ${chain?.name ?? `chain ${prepared.chainId}`}: ` +
          "Agent Wallet holds no key that can."
      : `Only Agent Wallet's delegate key ${prepared.delegate} can spend it, on ${chain?.name ?? `chain ${prepared.chainId}`}.`,
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
  return { summary, warning: anyPayeeWarning(parts, prepared.delegateKind), words: lines };
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
      perPayment: prepared.perPayment,
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
  tokens = [],
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
  /** the tokens the wallet may hold, offered by name; any other is named by its contract */
  tokens?: PickableToken[];
}) {
  const [busy, setBusy] = useState(false);
  // A card just reviewed comes to the top of the screen: on a phone, the button that signs it follows it there.
  const card = useRef<HTMLElement>(null);
  const reviewed = review && !("error" in review) ? review : null;
  useEffect(() => {
    if (reviewed) card.current?.scrollIntoView({ block: "start" });
  }, [reviewed]);
  const name = credential.name;
  const id = (field: string) => `allowance-${field}-${scope}`;
  const chain = chains.find((candidate) => candidate.id === form.chainId);
  const offered = tokens.filter((token) => token.chainId === form.chainId);
  const anyPayee = form.payees === "any";
  const set = (patch: Partial<AllowanceForm>) => onChange({ ...form, ...patch });
  const setToken = (index: number, patch: Partial<AllowanceForm["tokens"][number]>) =>
    set({ tokens: form.tokens.map((token, i) => (i === index ? { ...token, ...patch } : token)) });
  const symbolOf = (address: string) => offered.find((token) => token.address.toLowerCase() === address.toLowerCase())?.symbol;
  // a token given by its contract: its symbol as the chain says, beside its amounts (which the server reads in its units)
  const reads = useContractTokens(
    form.tokens.map(({ address }) =>
      isAddress(address.trim()) && !symbolOf(address) ? { chainId: form.chainId, address: address.trim() } : null,
    ),
  );

  async function prepare() {
    setBusy(true);
    try {
      const prepared = await callApi<PreparedAllowance>("/api/allowances/prepare", choicesOf(credential.id, form));
      onChange(form, { prepared, ...reviewOf(prepared, chain, contacts) });
    } catch (error) {
      onChange(form, { error: messageOf(error) });
    } finally {
      setBusy(false);
    }
  }

  const amount = (fieldId: string, label: string, value: string, unit: string | undefined, change: (value: string) => void) => (
    <>
      <label htmlFor={fieldId}>
        {label} for {name}
      </label>
      <span className="allowance-amount-field">
        <input id={fieldId} inputMode="decimal" size={12} value={value} onChange={(event) => change(event.target.value)} />
        {unit && <span className="muted"> {unit}</span>}
      </span>
    </>
  );
  const whole = (field: "expiresInDays" | "transactions", label: string) => (
    <>
      <label htmlFor={id(field)}>
        {label} for {name}
      </label>
      <input id={id(field)} inputMode="numeric" size={6} value={form[field]} onChange={(event) => set({ [field]: event.target.value })} />
    </>
  );

  return (
    <div className="limits stack allowance-picker">
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
      <fieldset>
        <legend>Who {name} may pay</legend>
        {(
          [
            ["listed", "Only these payees"],
            ["any", "Any payee, at most a set amount per payment"],
          ] as const
        ).map(([value, label]) => (
          <label key={value} className="inline choice">
            <input
              type="radio"
              name={id("payees")}
              value={value}
              checked={form.payees === value}
              onChange={() => set({ payees: value, ...(value === "any" && { coin: "" }) })}
            />{" "}
            {label}
          </label>
        ))}
        {anyPayee && (
          <p role="note" className="small">
            Any payee: Agent Wallet refuses a payment above the amount you set, but if Agent Wallet&apos;s server were compromised, anyone
            could be paid, up to the allowance per period and no more. For tokens only.
          </p>
        )}
      </fieldset>
      {!anyPayee && amount(id("coin"), `${chain?.symbol ?? "Coin"} per period`, form.coin, chain?.symbol, (coin) => set({ coin }))}
      {form.tokens.map((token, index) => {
        const picked = symbolOf(token.address);
        const read = reads[index];
        const unit = picked ?? (read && "token" in read ? read.token.symbol : undefined);
        return (
          <div key={index} className="stack">
            {offered.length > 0 && (
              <>
                <label htmlFor={id(`token-pick-${index}`)}>
                  Token {index + 1} for {name}
                </label>
                <select
                  id={id(`token-pick-${index}`)}
                  value={picked ? token.address : ""}
                  onChange={(event) => setToken(index, { address: event.target.value })}
                >
                  {offered.map((option) => (
                    <option key={option.address} value={option.address}>
                      {option.symbol}
                    </option>
                  ))}
                  <option value="">Another token, by its contract</option>
                </select>
              </>
            )}
            {!picked && (
              <>
                <label htmlFor={id(`token-${index}`)}>
                  Token {index + 1} contract for {name}
                </label>
                <input
                  id={id(`token-${index}`)}
                  className="mono"
                  size={44}
                  placeholder="0x…"
                  value={token.address}
                  onChange={(event) => setToken(index, { address: event.target.value })}
                />
                {read && "error" in read && (
                  <p role="alert" className="error small">
                    {read.error}
                  </p>
                )}
              </>
            )}
            {amount(id(`token-amount-${index}`), `Token ${index + 1} per period`, token.amount, unit, (value) =>
              setToken(index, { amount: value }),
            )}
            {anyPayee &&
              amount(id(`token-most-${index}`), `Token ${index + 1} at most per payment`, token.perPayment, unit, (value) =>
                setToken(index, { perPayment: value }),
              )}
            {anyPayee &&
              amount(id(`token-float-${index}`), `Token ${index + 1} float in the agent's account (optional)`, token.float, unit, (value) =>
                setToken(index, { float: value }),
              )}
          </div>
        );
      })}
      <button
        type="button"
        className="small"
        onClick={() => set({ tokens: [...form.tokens, { address: offered[0]?.address ?? "", amount: "", perPayment: "", float: "" }] })}
      >
        Add a token for {name}
      </button>
      {!anyPayee && (
        <>
          <label htmlFor={id("recipients")}>Allowed recipients for {name}</label>
          <textarea
            id={id("recipients")}
            rows={2}
            className="mono"
            placeholder="0x…, one per line"
            value={form.recipients}
            onChange={(event) => set({ recipients: event.target.value })}
          />
          <ContactPicks
            contacts={contacts}
            recipients={form.recipients}
            label={(contact) => `Let ${name} pay ${contact.label}`}
            onChange={(recipients) => set({ recipients })}
          />
        </>
      )}
      <label htmlFor={id("period")}>Allowance period for {name}</label>
      <select id={id("period")} value={form.period} onChange={(event) => set({ period: event.target.value as AllowanceForm["period"] })}>
        <option value="hour">per hour</option>
        <option value="day">per day</option>
        <option value="week">per week</option>
      </select>
      {whole("expiresInDays", "Days until the allowance ends (at most 30)")}
      {whole("transactions", "Number of payments in all")}
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
          <AllowanceCard name={name} review={review} cardRef={card} />
        ))}
    </div>
  );
}
