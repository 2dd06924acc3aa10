"use client";

import { useState } from "react";
import { unsealForExport } from "@/components/browser/passkey";
import { Feedback, useAction } from "@/components/browser/use-action";
import { createRecoveryKit, MIN_PASSPHRASE_LENGTH, openRecoveryKit, passphraseProblem } from "@/lib/wallet/recovery-kit";

/**
 * A recovery passphrase kept beside the kit (a password manager synced with the download folder's machine) guards
 * nothing: browsers and the common password managers (1Password, LastPass, Bitwarden, Dashlane) are asked neither
 * to fill nor to save it.
 */
const NOT_FOR_PASSWORD_MANAGERS = {
  autoComplete: "off",
  "data-1p-ignore": "true",
  "data-lpignore": "true",
  "data-bwignore": "true",
  "data-form-type": "other",
} as const;

/** Writes a recovery kit: the key unsealed in this page, encrypted under a passphrase, downloaded as a file. */
export function DownloadRecoveryKit({ credentialId, name }: { credentialId: string; name: string }) {
  const { busy, error, status, run } = useAction();
  const [open, setOpen] = useState(false);
  const [passphrase, setPassphrase] = useState("");
  const [confirmation, setConfirmation] = useState("");

  const download = () =>
    run(async () => {
      const problem = passphraseProblem(passphrase, confirmation);
      if (problem) throw new Error(problem);
      const { privateKey, address } = await unsealForExport(credentialId, "recovery-kit");
      const kit = await createRecoveryKit(privateKey, passphrase);
      const link = document.createElement("a");
      link.href = URL.createObjectURL(new Blob([JSON.stringify(kit, null, 2)], { type: "application/json" }));
      link.download = `agent-wallet-recovery-${address}.json`;
      link.click();
      URL.revokeObjectURL(link.href);
      setPassphrase("");
      setConfirmation("");
      setOpen(false);
      return `Recovery kit for ${name} downloaded. Keep the file and its passphrase apart.`;
    });

  if (!open)
    return (
      <>
        <button type="button" disabled={busy} onClick={() => setOpen(true)}>
          Download recovery kit
        </button>
        <Feedback error={error} status={status} />
      </>
    );
  return (
    <form
      className="card"
      aria-label={`Recovery kit for ${name}`}
      onSubmit={(event) => {
        event.preventDefault();
        void download();
      }}
    >
      <p className="muted">
        The kit holds this wallet&apos;s key encrypted under a passphrase of at least {MIN_PASSPHRASE_LENGTH} characters. Without the
        passphrase the file is useless; with it, anyone controls the funds.
      </p>
      <label htmlFor={`kit-passphrase-${credentialId}`}>Recovery passphrase</label>
      <input
        id={`kit-passphrase-${credentialId}`}
        type="password"
        {...NOT_FOR_PASSWORD_MANAGERS}
        required
        value={passphrase}
        onChange={(event) => setPassphrase(event.target.value)}
      />
      <label htmlFor={`kit-confirmation-${credentialId}`}>Confirm recovery passphrase</label>
      <input
        id={`kit-confirmation-${credentialId}`}
        type="password"
        {...NOT_FOR_PASSWORD_MANAGERS}
        required
        value={confirmation}
        onChange={(event) => setConfirmation(event.target.value)}
      />
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          Encrypt and download
        </button>
        <button type="button" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
      <Feedback error={error} status={status} />
    </form>
  );
}

/** Imports a recovery kit: decrypted in this page, then sealed under the current passkey like a pasted key. */
export function ImportRecoveryKit({
  canSeal,
  connect,
}: {
  canSeal: boolean;
  connect: (name: string, privateKey: `0x${string}`) => Promise<void>;
}) {
  const { busy, error, status, run } = useAction();
  const [name, setName] = useState("");
  const [file, setFile] = useState<File | null>(null);
  const [passphrase, setPassphrase] = useState("");

  const importKit = () =>
    run(async () => {
      if (!file) throw new Error("Choose a recovery kit file.");
      let parsed: unknown;
      try {
        parsed = JSON.parse(await file.text());
      } catch {
        throw new Error("This file is not a recovery kit");
      }
      const { privateKey, address } = await openRecoveryKit(parsed, passphrase);
      await connect(name, privateKey);
      setPassphrase("");
      setName("");
      return `Wallet “${name}” (${address}) imported from its recovery kit.`;
    });

  return (
    <form
      className="card"
      onSubmit={(event) => {
        event.preventDefault();
        void importKit();
      }}
    >
      <h2>Import a recovery kit</h2>
      <p className="muted">The kit is decrypted in this browser and the key sealed under your passkey; neither is sent.</p>
      <label htmlFor="kit-name">Recovered wallet name</label>
      <input id="kit-name" required maxLength={100} value={name} onChange={(event) => setName(event.target.value)} />
      <label htmlFor="kit-file">Recovery kit file</label>
      <input
        id="kit-file"
        type="file"
        accept="application/json,.json"
        required
        onChange={(event) => setFile(event.target.files?.[0] ?? null)}
      />
      <label htmlFor="kit-passphrase">Recovery kit passphrase</label>
      <input
        id="kit-passphrase"
        type="password"
        {...NOT_FOR_PASSWORD_MANAGERS}
        required
        value={passphrase}
        onChange={(event) => setPassphrase(event.target.value)}
      />
      <div>
        <button type="submit" disabled={busy || !canSeal}>
          Import recovery kit
        </button>
      </div>
      <Feedback error={error} status={status} />
    </form>
  );
}
