"use client";

import { useState } from "react";
import type { PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import { callApi, messageOf } from "@/components/browser/api";
import { useHydrated } from "@/components/browser/use-action";
import type { Contact } from "@/lib/wallet/address-book";
import type { NativeCoin, PickableToken } from "@/lib/wallet/policy-presets";
import { approveGrantSet, emptyChoice, GrantSetPicker, type PickableCredential } from "@/components/grants/grant-set-picker";
import type { AllowanceChain } from "@/components/grants/allowance-types";

/**
 * The consent decision: grant set, stay connected, then one passkey assertion bound to exactly that. With an
 * allowance, the same tap unseals the wallet's key, which signs the allowance the page stated in words.
 */
export function ConsentForm({
  requestId,
  credentials,
  contacts,
  offlineRequested,
  allowanceChains,
  tokens,
  coin,
}: {
  requestId: string;
  credentials: PickableCredential[];
  contacts: Contact[];
  /** The configured chains' coin, which spending limits are typed in. */
  coin: NativeCoin;
  offlineRequested: boolean;
  allowanceChains: AllowanceChain[];
  /** the tokens the wallets may hold, which token caps and an allowance pick by name */
  tokens: PickableToken[];
}) {
  const [choice, setChoice] = useState(() => emptyChoice(credentials, allowanceChains));
  const [stayConnected, setStayConnected] = useState(offlineRequested);
  const hydrated = useHydrated();
  const [working, setBusy] = useState(false);
  const busy = working || !hydrated;
  const [error, setError] = useState<string | null>(null);

  async function decide(action: () => Promise<{ location: string }>) {
    setBusy(true);
    setError(null);
    try {
      const { location } = await action();
      window.location.assign(location);
    } catch (caught) {
      setError(messageOf(caught));
      setBusy(false);
    }
  }

  const approve = () =>
    decide(() => {
      const path = `/api/consent/${encodeURIComponent(requestId)}`;
      return approveGrantSet(
        { ...emptyChoice(credentials, allowanceChains), ...choice },
        (credentials) => callApi<PublicKeyCredentialRequestOptionsJSON>(`${path}/options`, { credentials, stayConnected }),
        (credentials, assertion) => callApi<{ location: string }>(`${path}/approve`, { credentials, stayConnected, assertion }),
      );
    });

  const deny = () => decide(() => callApi<{ location: string }>(`/api/consent/${encodeURIComponent(requestId)}/deny`));

  return (
    <div className="stack">
      <section>
        <h2>Wallets this application may use</h2>
        {credentials.length === 0 ? (
          <p className="muted">You have no wallets yet. Create one below, or approve without any.</p>
        ) : (
          <>
            <p className="muted small">
              read: it may see the address and balance, never ask for a signature. approve: it may ask, and every signature waits for your
              passkey.{allowanceChains.length > 0 && " allowance: it pays by itself within limits you sign now, which the chain enforces."}
            </p>
            <GrantSetPicker
              credentials={credentials}
              choice={{ ...emptyChoice(credentials, allowanceChains), ...choice }}
              onChange={setChoice}
              contacts={contacts}
              coin={coin}
              allowanceChains={allowanceChains}
              tokens={tokens}
            />
          </>
        )}
      </section>
      {offlineRequested && (
        <div className="card">
          <input
            id="stay-connected"
            type="checkbox"
            checked={stayConnected}
            onChange={(change) => setStayConnected(change.target.checked)}
          />{" "}
          <label htmlFor="stay-connected" className="inline">
            Stay connected
          </label>
          <p className="muted small">
            The application may renew its access for up to 30 days of inactivity, until you revoke it. Clear this to connect for one hour
            only.
          </p>
        </div>
      )}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <div className="actions">
        <button type="button" className="primary" onClick={() => void approve()} disabled={busy}>
          Approve with passkey
        </button>
        <button type="button" onClick={() => void deny()} disabled={busy}>
          Deny
        </button>
      </div>
    </div>
  );
}
