"use client";

import { useState } from "react";
import { unsealForExport } from "@/components/browser/passkey";
import { Feedback, useAction } from "@/components/browser/use-action";

/** Shows a wallet's private key in this page only, after a passkey assertion; it is never sent anywhere. */
export function ExportKey({ credentialId, name }: { credentialId: string; name: string }) {
  const { busy, error, status, run } = useAction();
  const [privateKey, setPrivateKey] = useState<string | null>(null);

  const reveal = () =>
    run(async () => {
      setPrivateKey((await unsealForExport(credentialId, "key")).privateKey);
    });

  if (!privateKey)
    return (
      <>
        <button type="button" disabled={busy} onClick={() => void reveal()}>
          Export private key
        </button>
        <Feedback error={error} status={status} />
      </>
    );
  return (
    <div role="region" aria-label={`Private key of ${name}`} className="card">
      <p role="alert" className="warning">
        Anyone with this key controls the funds of {name}, without any passkey. Never paste it into a chat, a form or an agent; keep it
        offline.
      </p>
      <code className="mono small" aria-label="Private key">
        {privateKey}
      </code>
      <div className="actions">
        <button type="button" onClick={() => void navigator.clipboard.writeText(privateKey)}>
          Copy
        </button>
        <button type="button" onClick={() => setPrivateKey(null)}>
          Hide
        </button>
      </div>
    </div>
  );
}
