"use client";

import { useState } from "react";
import { callApi } from "@/components/browser/api";
import { startAuthentication } from "@/components/browser/passkey";
import { Feedback, useAction } from "@/components/browser/use-action";
import type { ConnectedClient } from "@/lib/oauth/connected-clients";
import type { Contact } from "@/lib/wallet/address-book";
import type { NativeCoin, PickableToken } from "@/lib/wallet/policy-presets";
import type { RevocationToSign } from "@/lib/allowances/revocation-operation";
import { ClientAllowances } from "./client-allowances";
import type { RevocationCeremony } from "./sign-revocations";
import { when } from "@/components/shared/when";
import { CredentialLimits } from "./credential-limits";
import { NewApiKey } from "./new-api-key";
import { GrantAllowance } from "./grant-allowance";
import type { AllowanceChain } from "@/components/grants/allowance-types";
import { approveGrantSet, emptyChoice, GrantSetPicker, type PickableCredential } from "@/components/grants/grant-set-picker";
import type { PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";

/** A connected client as the page receives it: lib's shape with dates serialized. */
export type ClientRow = Omit<ConnectedClient, "connectedAt" | "lastUsedAt"> & { connectedAt: string; lastUsedAt: string | null };

export function ClientsList({
  clients,
  contacts,
  coin,
  emptyText,
  allowance,
  tokens,
}: {
  clients: ClientRow[];
  contacts: Contact[];
  /** The configured chains' coin, which spending limits are typed in. */
  coin: NativeCoin;
  /** the tokens the wallets may hold, which token caps and an allowance pick by name */
  tokens: PickableToken[];
  emptyText: string;
  /** chains that offer allowances, and the person's wallets whose key can sign one (evm, by id) */
  allowance: { chains: AllowanceChain[]; wallets: string[] };
}) {
  const { busy, error, run } = useAction();

  function revoke(client: ClientRow) {
    if (!window.confirm(`Revoke ${client.name}? It loses access at once, and its allowances stop.`)) return;
    const path = `/api/clients/${encodeURIComponent(client.clientId)}/revoke`;
    void run(async () => {
      const ceremony = await callApi<RevocationCeremony & { revocations: (RevocationToSign & { allowanceIds: string[] })[] }>(
        `${path}/options`,
      );
      if (!ceremony.revocations.length) {
        await callApi(path, { assertion: await startAuthentication({ optionsJSON: ceremony.options }) });
        return;
      }
      // The same tap signs the disabling of its allowances on chain.
      const { signRevocations } = await import("./sign-revocations");
      const { assertion, signed } = await signRevocations(ceremony, ceremony.revocations);
      await callApi(path, {
        assertion,
        revocations: signed.map(({ revocation, signature }) => ({
          allowanceIds: revocation.allowanceIds,
          nonce: revocation.nonce,
          signature,
        })),
      });
    });
  }

  if (!clients.length) return <p className="muted">{emptyText}</p>;
  return (
    <>
      <Feedback error={error} />
      <ul className="rows">
        {clients.map((client) => (
          <li key={client.clientId} className="row" aria-label={client.name}>
            <div>
              <strong>{client.name}</strong>{" "}
              <span className={client.status === "active" ? "badge" : "badge revoked"}>
                {client.status === "active" ? "Active" : "Revoked"}
              </span>
              {client.kind === "oauth" ? (
                <div className="small">
                  {client.metadataHost && (
                    <>
                      Client metadata from <span className="mono">{client.metadataHost}</span> ·{" "}
                    </>
                  )}
                  {client.redirectHosts.length ? (
                    <>
                      Sends you back to <span className="mono">{client.redirectHosts.join(", ")}</span>
                    </>
                  ) : (
                    // a device's client (the CLI): it was given a code, and has no address to send anyone back to
                    "Connected with a code its device showed"
                  )}
                  {client.staysConnected ? " · stays connected" : ""}
                </div>
              ) : (
                <div className="small mono">svc_live_…{client.keyHint}</div>
              )}
              <div className="small">
                {client.credentials.length
                  ? client.credentials.map((credential) => `${credential.name} (${credential.mode})`).join(", ")
                  : "No wallets granted"}
              </div>
              {client.credentials.map(
                (credential) =>
                  credential.limits && (
                    <CredentialLimits
                      key={credential.id}
                      grantId={client.grantId}
                      credential={{ ...credential, limits: credential.limits }}
                      contacts={contacts}
                      coin={coin}
                      tokens={tokens}
                    />
                  ),
              )}
              <ClientAllowances allowances={client.allowances} />
              {client.status === "active" &&
                allowance.chains.length > 0 &&
                client.credentials
                  .filter((credential) => allowance.wallets.includes(credential.id))
                  .map((credential) => (
                    <GrantAllowance
                      key={credential.id}
                      grantId={client.grantId}
                      clientName={client.name}
                      credential={credential}
                      // still redeemable on chain: stopped ones too, until the chain confirms their disabling
                      live={client.allowances.filter(
                        (given) => given.credentialId === credential.id && ["active", "suspended", "revoking"].includes(given.status),
                      )}
                      chains={allowance.chains}
                      contacts={contacts}
                      tokens={tokens}
                    />
                  ))}
              <div className="muted small">
                Connected {when(client.connectedAt)} · last used {when(client.lastUsedAt)}
              </div>
            </div>
            {client.status === "active" && (
              <button type="button" className="danger" disabled={busy} onClick={() => void revoke(client)}>
                Revoke {client.name}
              </button>
            )}
          </li>
        ))}
      </ul>
    </>
  );
}

/**
 * Issue a personal API key for a grant set, approved with a passkey; the key is shown once. With an allowance, the
 * same tap signs it, as at consent: the key, its grant and the allowance exist together or not at all.
 */
export function CreateApiKeyForm({
  credentials,
  contacts,
  coin,
  baseUrl,
  allowanceChains,
  tokens,
}: {
  credentials: PickableCredential[];
  contacts: Contact[];
  coin: NativeCoin;
  baseUrl: string;
  allowanceChains: AllowanceChain[];
  tokens: PickableToken[];
}) {
  const { busy, error, run } = useAction();
  const [name, setName] = useState("");
  const [choice, setChoice] = useState(() => emptyChoice(credentials, allowanceChains));
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);

  const create = () =>
    run(async () => {
      setCreated(null);
      const key = name.trim();
      setCreated(
        await approveGrantSet(
          { ...emptyChoice(credentials, allowanceChains), ...choice },
          (chosen) => callApi<PublicKeyCredentialRequestOptionsJSON>("/api/api-keys/options", { name: key, credentials: chosen }),
          (chosen, assertion) => callApi<{ name: string; key: string }>("/api/api-keys", { name: key, credentials: chosen, assertion }),
        ),
      );
      setName("");
      setChoice(emptyChoice(credentials, allowanceChains));
    });

  return (
    <form
      className="card"
      aria-labelledby="new-api-key-heading"
      onSubmit={(event) => {
        event.preventDefault();
        void create();
      }}
    >
      <h2 id="new-api-key-heading">New API key</h2>
      <p className="muted small">
        For scripts and servers. It works like a connected client with exactly this grant; signatures still wait for your passkey
        {allowanceChains.length > 0 && ", except payments within an allowance you sign here, which the chain enforces"}.
      </p>
      <label htmlFor="key-name">Key name</label>
      <input id="key-name" required maxLength={100} value={name} onChange={(event) => setName(event.target.value)} />
      <GrantSetPicker
        credentials={credentials}
        choice={{ ...emptyChoice(credentials, allowanceChains), ...choice }}
        onChange={setChoice}
        contacts={contacts}
        allowanceChains={allowanceChains}
        coin={coin}
        tokens={tokens}
      />
      <div>
        <button type="submit" className="primary" disabled={busy}>
          Create API key
        </button>
      </div>
      <Feedback error={error} />
      {created && <NewApiKey name={created.name} apiKey={created.key} baseUrl={baseUrl} />}
    </form>
  );
}
