"use client";

import { Fragment, useState } from "react";
import { formatEther } from "viem";
import type { PolicyView } from "@/contract";
import { inToken, limitsInWords } from "@/contract/limits-in-words";
import { callApi } from "@/components/browser/api";
import { approveWithPasskey } from "@/components/browser/passkey";
import { Feedback, useAction } from "@/components/browser/use-action";
import { when } from "@/components/shared/when";
import { choiceOfPolicy, LimitsPicker, policyOfChoice } from "@/components/grants/limits-picker";
import { POLICY_PRESETS, type NativeCoin, type PickableToken } from "@/lib/wallet/policy-presets";
import type { Contact } from "@/lib/wallet/address-book";

type Limits = Pick<PolicyView, "policy" | "remaining">;
type Allowance = NonNullable<PolicyView["remaining"]["native_per_day"]>;

const nameOf = (address: string, contacts: Contact[]) =>
  contacts.find((contact) => contact.address.toLowerCase() === address.toLowerCase())?.label ??
  `${address.slice(0, 6)}…${address.slice(-4)}`;

/** The rules in a few words, in the chains' coins and the tokens' units; recipients by their names in the address book. */
function summary(limits: Limits, contacts: Contact[]): string {
  const rules = limitsInWords(limits, {
    recipients: (addresses) => addresses.map((address) => nameOf(address, contacts)).join(", ") || "nobody",
  });
  return rules.length ? rules.join(" · ") : POLICY_PRESETS.ask.label();
}

/** How much of a rolling cap is held, as a bar with its words beside it. */
function Spend({ label, allowance, unit }: { label: string; allowance: Allowance; unit: (amount: string) => string }) {
  // <progress> takes numbers: scale both to the limit so large wei amounts keep their ratio.
  const share = BigInt(allowance.limit) === 0n ? 1 : Number((BigInt(allowance.used) * 1000n) / BigInt(allowance.limit)) / 1000;
  return (
    <div className="spend">
      <progress aria-label={label} max={1} value={Math.min(share, 1)} />
      <span className="small">
        {unit(allowance.used)} of {unit(allowance.limit)} · {unit(allowance.remaining)} left
        {allowance.frees_at ? ` · more from ${when(allowance.frees_at)}` : ""}
      </span>
    </div>
  );
}

/** One approve-mode credential of a grant: its limits, what is spent of them, and a passkey-approved edit. */
export function CredentialLimits({
  grantId,
  credential,
  contacts,
  coin,
  tokens,
}: {
  grantId: string;
  credential: { id: string; name: string; mode: string; limits: Limits };
  contacts: Contact[];
  coin: NativeCoin;
  /** the tokens the wallets may hold, offered by name */
  tokens: PickableToken[];
}) {
  const { busy, error, status, run } = useAction();
  // the caps already set read back in their tokens' units: the server read each one's symbol and decimals
  const [choice, setChoice] = useState(() =>
    choiceOfPolicy(credential.limits.policy, [
      ...tokens,
      ...credential.limits.remaining.tokens.flatMap(({ chain_id, token, symbol, decimals }) =>
        symbol != null && decimals != null ? [{ chainId: chain_id, address: token, symbol, decimals }] : [],
      ),
    ]),
  );
  const [editing, setEditing] = useState(false);
  const { remaining } = credential.limits;
  const path = `/api/grants/${encodeURIComponent(grantId)}/policy`;

  const save = () =>
    run(async () => {
      const change = { credential_id: credential.id, policy: await policyOfChoice(choice) };
      const assertion = await approveWithPasskey(`${path}/options`, change);
      await callApi(path, { ...change, assertion }, "PUT");
      setEditing(false);
      return `Limits for ${credential.name} saved`;
    });

  return (
    <div className="credential-limits">
      <div className="small">
        {/* an allowance pays within its own limits without asking: these rules are for everything else */}
        {credential.mode === "allowance" ? "Outside the allowance, limits" : "Limits"} for {credential.name}:{" "}
        {summary(credential.limits, contacts)}
      </div>
      {remaining.native_by_chain.map((chain) => {
        // Each chain's caps count on their own, in its coin; the chain is named once there are several.
        const on = remaining.native_by_chain.length > 1 ? ` on ${chain.chain_name}` : "";
        const coin = (wei: string) => `${formatEther(BigInt(wei))} ${chain.symbol}`;
        return (
          <Fragment key={chain.chain_id}>
            {chain.per_day && <Spend label={`Spent today${on} with ${credential.name}`} allowance={chain.per_day} unit={coin} />}
            {chain.per_week && <Spend label={`Spent this week${on} with ${credential.name}`} allowance={chain.per_week} unit={coin} />}
          </Fragment>
        );
      })}
      {remaining.tokens.map(
        (token) =>
          token.per_day && (
            <Spend
              key={`${token.chain_id}:${token.token}`}
              label={`Spent today of token ${token.token} with ${credential.name}`}
              allowance={token.per_day}
              unit={(amount) => inToken(amount, token)}
            />
          ),
      )}
      {editing ? (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void save();
          }}
        >
          <LimitsPicker
            credentialId={`${grantId}-${credential.id}`}
            name={credential.name}
            choice={choice}
            onChange={setChoice}
            contacts={contacts}
            coin={coin}
            tokens={tokens}
          />
          <button type="submit" className="primary" disabled={busy}>
            Save limits for {credential.name}
          </button>{" "}
          <button type="button" disabled={busy} onClick={() => setEditing(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <button type="button" disabled={busy} onClick={() => setEditing(true)}>
          Edit limits for {credential.name}
        </button>
      )}
      <Feedback error={error} status={status} />
    </div>
  );
}
