"use client";

import { useState } from "react";
import { startRegistration } from "@simplewebauthn/browser";
import type { PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import { callApi } from "@/components/browser/api";
import { approveWithPasskey, assertWithPrf, unsealLocally, type StoredSeal } from "@/components/browser/passkey";
import { Feedback, RenameControl, useAction } from "@/components/browser/use-action";
import { when } from "@/components/shared/when";
import { newPrfSalt, sealPrivateKey } from "@/lib/wallet/seal";

export type PasskeyRow = { id: string; name: string; createdAt: string; lastUsedAt: string | null; prfCapable: boolean };
export type SealedWallet = { id: string; name: string; passkeyIds: string[] };

/**
 * Lets `passkeyId` unlock a wallet too: unseal the key with a passkey that has
 * it, then seal it again under the new passkey's PRF output. Two passkey prompts.
 */
async function resealUnder(wallet: SealedWallet, passkeyId: string) {
  const { options, address, seals } = await callApi<{
    options: PublicKeyCredentialRequestOptionsJSON;
    address: string;
    seals: StoredSeal[];
  }>(`/api/credentials/${encodeURIComponent(wallet.id)}/seals/options`, { passkeyId });
  const privateKey = await unsealLocally(seals, wallet.id, address);
  const salt = newPrfSalt();
  const { response, prfOutput } = await assertWithPrf(options, salt);
  const seal = await sealPrivateKey({ privateKey, prfOutput, salt, credentialId: wallet.id, address });
  prfOutput.fill(0);
  await callApi(`/api/credentials/${encodeURIComponent(wallet.id)}/seals`, { seal, assertion: response });
}

type Run = (action: () => Promise<string | void>) => Promise<boolean>;

export function PasskeysPanel({ passkeys, wallets }: { passkeys: PasskeyRow[]; wallets: SealedWallet[] }) {
  const { busy, error, status, run } = useAction();
  const [name, setName] = useState("");

  const add = () =>
    run(async () => {
      // An existing passkey approves first: a session alone cannot add a way into the account.
      const assertion = await approveWithPasskey("/api/passkeys/approval-options");
      const optionsJSON = await callApi<Parameters<typeof startRegistration>[0]["optionsJSON"]>("/api/passkeys/options", { assertion });
      const response = await startRegistration({ optionsJSON });
      const created = await callApi<{ name: string; prfCapable: boolean }>("/api/passkeys", { response, name: name.trim() || undefined });
      setName("");
      return created.prfCapable
        ? `Passkey “${created.name}” added.`
        : `Passkey “${created.name}” added. It does not support PRF, so it cannot unlock wallet keys.`;
    });

  return (
    <div className="stack">
      <Feedback error={error} status={status} />
      <ul className="rows" aria-label="Passkeys">
        {passkeys.map((passkey) => (
          <PasskeyItem key={passkey.id} passkey={passkey} onlyOne={passkeys.length === 1} run={run} busy={busy} wallets={wallets} />
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
  busy,
  wallets,
}: {
  passkey: PasskeyRow;
  onlyOne: boolean;
  run: Run;
  busy: boolean;
  wallets: SealedWallet[];
}) {
  const locked = wallets.filter((wallet) => !wallet.passkeyIds.includes(passkey.id));
  const path = `/api/passkeys/${encodeURIComponent(passkey.id)}`;
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
                  disabled={busy}
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
      <div className="actions">
        <RenameControl
          name={passkey.name}
          onSave={(name) =>
            run(async () => {
              const assertion = await approveWithPasskey(`${path}/options`, { action: "rename", name });
              await callApi(path, { name, assertion }, "PATCH");
              return "Passkey renamed.";
            })
          }
        />
        <button
          type="button"
          className="danger"
          disabled={onlyOne || busy}
          title={onlyOne ? "Your only passkey cannot be removed" : undefined}
          onClick={() => {
            if (window.confirm(`Remove the passkey ${passkey.name}?`)) {
              void run(async () => {
                const assertion = await approveWithPasskey(`${path}/options`, { action: "remove" });
                await callApi(path, { assertion }, "DELETE");
                return "Passkey removed. Every other session of your account was signed out.";
              });
            }
          }}
        >
          Remove {passkey.name}
        </button>
      </div>
    </li>
  );
}
