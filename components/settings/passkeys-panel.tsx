"use client";

import { useState } from "react";
import { useRouter } from "next/navigation";
import { startRegistration } from "@simplewebauthn/browser";
import type { PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import { callApi, messageOf } from "@/components/browser/api";
import { assertWithPrf, unsealLocally, type StoredSeal } from "@/components/browser/passkey";
import { newPrfSalt, sealPrivateKey } from "@/lib/wallet/seal";

export type PasskeyRow = { id: string; name: string; createdAt: string; lastUsedAt: string | null; prfCapable: boolean };
export type SealedWallet = { id: string; name: string; passkeyIds: string[] };

/**
 * Lets `passkeyId` unlock a wallet too: unseal the key with a passkey that has
 * it, then seal it again under the new passkey's PRF output. Two passkey prompts.
 */
async function resealUnder(wallet: SealedWallet, passkeyId: string) {
  const { options, address, seals } = await callApi<{ options: PublicKeyCredentialRequestOptionsJSON; address: string; seals: StoredSeal[] }>(
    `/api/credentials/${encodeURIComponent(wallet.id)}/seals/options`,
    { passkeyId },
  );
  const privateKey = await unsealLocally(seals, wallet.id, address);
  const salt = newPrfSalt();
  const { response, prfOutput } = await assertWithPrf(options, salt);
  const seal = await sealPrivateKey({ privateKey, prfOutput, salt, credentialId: wallet.id, address });
  prfOutput.fill(0);
  await callApi(`/api/credentials/${encodeURIComponent(wallet.id)}/seals`, { seal, assertion: response });
}

function when(iso: string | null): string {
  return iso ? new Date(iso).toLocaleString() : "never";
}

export function PasskeysPanel({ passkeys, wallets }: { passkeys: PasskeyRow[]; wallets: SealedWallet[] }) {
  const router = useRouter();
  const [name, setName] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);

  async function run(action: () => Promise<string | void>) {
    setBusy(true);
    setError(null);
    setStatus(null);
    try {
      setStatus((await action()) ?? null);
      router.refresh();
    } catch (caught) {
      setError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  }

  const add = () =>
    run(async () => {
      const optionsJSON = await callApi<Parameters<typeof startRegistration>[0]["optionsJSON"]>("/api/passkeys/options");
      const response = await startRegistration({ optionsJSON });
      const created = await callApi<{ name: string; prfCapable: boolean }>("/api/passkeys", { response, name: name.trim() || undefined });
      setName("");
      return created.prfCapable ? `Passkey “${created.name}” added.` : `Passkey “${created.name}” added. It does not support PRF, so it cannot unlock wallet keys.`;
    });

  return (
    <div className="stack">
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {status && (
        <p role="status" className="ok">
          {status}
        </p>
      )}
      <ul className="rows" aria-label="Passkeys">
        {passkeys.map((passkey) => (
          <PasskeyItem key={passkey.id} passkey={passkey} onlyOne={passkeys.length === 1} run={run} wallets={wallets} />
        ))}
      </ul>
      <form
        className="card"
        onSubmit={(event) => {
          event.preventDefault();
          void add();
        }}
      >
        <h2>Add a passkey</h2>
        <label htmlFor="passkey-name">Passkey name</label>
        <input id="passkey-name" maxLength={100} placeholder="e.g. Phone" value={name} onChange={(event) => setName(event.target.value)} />
        <div>
          <button type="submit" className="primary" disabled={busy}>
            Add passkey
          </button>
        </div>
      </form>
    </div>
  );
}

function PasskeyItem({
  passkey,
  onlyOne,
  run,
  wallets,
}: {
  passkey: PasskeyRow;
  onlyOne: boolean;
  run: (action: () => Promise<string | void>) => Promise<void>;
  wallets: SealedWallet[];
}) {
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState(passkey.name);
  const locked = wallets.filter((wallet) => !wallet.passkeyIds.includes(passkey.id));
  return (
    <li className="row">
      <div>
        <strong>{passkey.name}</strong> <span className="badge">{passkey.prfCapable ? "supports PRF" : "no PRF"}</span>
        <div className="muted small">
          Created {when(passkey.createdAt)} · last used {when(passkey.lastUsedAt)}
        </div>
        {passkey.prfCapable && wallets.length > 0 && (
          <div className="small">
            Unlocks {wallets.length - locked.length} of {wallets.length} wallet{wallets.length === 1 ? "" : "s"}
            {locked.length > 0 && (
              <>
                {" "}
                <button
                  type="button"
                  onClick={() =>
                    void run(async () => {
                      for (const wallet of locked) await resealUnder(wallet, passkey.id);
                      return `${passkey.name} now unlocks ${locked.map((wallet) => wallet.name).join(", ")}.`;
                    })
                  }
                >
                  Let {passkey.name} unlock {locked.length === 1 ? locked[0].name : `${locked.length} wallets`}
                </button>
              </>
            )}
          </div>
        )}
      </div>
      {renaming ? (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void run(async () => {
              await callApi(`/api/passkeys/${encodeURIComponent(passkey.id)}`, { name }, "PATCH");
              setRenaming(false);
              return "Passkey renamed.";
            });
          }}
        >
          <label htmlFor={`rename-${passkey.id}`}>New name for {passkey.name}</label>
          <input id={`rename-${passkey.id}`} required maxLength={100} value={name} onChange={(event) => setName(event.target.value)} />
          <button type="submit">Save name</button>
        </form>
      ) : (
        <div className="actions">
          <button type="button" onClick={() => setRenaming(true)}>
            Rename {passkey.name}
          </button>
          <button
            type="button"
            className="danger"
            disabled={onlyOne}
            title={onlyOne ? "Your only passkey cannot be removed" : undefined}
            onClick={() => {
              if (window.confirm(`Remove the passkey ${passkey.name}?`)) {
                void run(async () => {
                  await callApi(`/api/passkeys/${encodeURIComponent(passkey.id)}`, {}, "DELETE");
                  return "Passkey removed.";
                });
              }
            }}
          >
            Remove {passkey.name}
          </button>
        </div>
      )}
    </li>
  );
}
