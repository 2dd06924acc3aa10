"use client";

import { useState } from "react";
import { useRouter } from "next/navigation";
import { startAuthentication, type PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import { callApi, messageOf } from "@/components/browser/api";
import { chosenGrantSet, emptyChoice, GrantSetPicker, type PickableCredential } from "@/components/grants/grant-set-picker";

export type ClientRow = {
  clientId: string;
  kind: "oauth" | "api_key";
  name: string;
  status: "active" | "revoked";
  redirectHosts: string[];
  keyHint: string | null;
  connectedAt: string;
  lastUsedAt: string | null;
  staysConnected: boolean;
  credentials: { id: string; name: string; mode: string }[];
};

function when(iso: string | null) {
  return iso ? new Date(iso).toLocaleString() : "never";
}

export function ClientsList({ clients, emptyText }: { clients: ClientRow[]; emptyText: string }) {
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);

  async function revoke(client: ClientRow) {
    if (!window.confirm(`Revoke ${client.name}? It loses access at once.`)) return;
    setError(null);
    try {
      await callApi(`/api/clients/${encodeURIComponent(client.clientId)}/revoke`);
      router.refresh();
    } catch (caught) {
      setError(messageOf(caught));
    }
  }

  if (!clients.length) return <p className="muted">{emptyText}</p>;
  return (
    <>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <ul className="rows">
        {clients.map((client) => (
          <li key={client.clientId} className="row" aria-label={client.name}>
            <div>
              <strong>{client.name}</strong> <span className={client.status === "active" ? "badge" : "badge revoked"}>{client.status === "active" ? "Active" : "Revoked"}</span>
              {client.kind === "oauth" ? (
                <div className="small">
                  Sends you back to <span className="mono">{client.redirectHosts.join(", ")}</span>
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
              <div className="muted small">
                Connected {when(client.connectedAt)} · last used {when(client.lastUsedAt)}
              </div>
            </div>
            {client.status === "active" && (
              <button type="button" className="danger" onClick={() => void revoke(client)}>
                Revoke {client.name}
              </button>
            )}
          </li>
        ))}
      </ul>
    </>
  );
}

/** Issue a personal API key for a grant set, approved with a passkey; the key is shown once. */
export function CreateApiKeyForm({ credentials }: { credentials: PickableCredential[] }) {
  const router = useRouter();
  const [name, setName] = useState("");
  const [choice, setChoice] = useState(() => emptyChoice(credentials));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);

  async function create() {
    setBusy(true);
    setError(null);
    setCreated(null);
    try {
      const request = { name: name.trim(), credentials: chosenGrantSet({ ...emptyChoice(credentials), ...choice }) };
      const optionsJSON = await callApi<PublicKeyCredentialRequestOptionsJSON>("/api/api-keys/options", request);
      const assertion = await startAuthentication({ optionsJSON });
      const issued = await callApi<{ name: string; key: string }>("/api/api-keys", { ...request, assertion });
      setCreated(issued);
      setName("");
      setChoice(emptyChoice(credentials));
      router.refresh();
    } catch (caught) {
      setError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form
      className="card"
      onSubmit={(event) => {
        event.preventDefault();
        void create();
      }}
    >
      <h2>New API key</h2>
      <p className="muted small">For scripts and servers. It works like a connected client with exactly this grant; signatures still wait for your passkey.</p>
      <label htmlFor="key-name">Key name</label>
      <input id="key-name" required maxLength={100} value={name} onChange={(event) => setName(event.target.value)} />
      <GrantSetPicker credentials={credentials} choice={{ ...emptyChoice(credentials), ...choice }} onChange={setChoice} />
      <div>
        <button type="submit" className="primary" disabled={busy}>
          Create API key
        </button>
      </div>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {created && (
        <div role="status" className="ok">
          <p>
            Key “{created.name}” created. Copy it now: it is shown only once.
          </p>
          <code data-testid="new-api-key" className="mono key">
            {created.key}
          </code>
        </div>
      )}
    </form>
  );
}
