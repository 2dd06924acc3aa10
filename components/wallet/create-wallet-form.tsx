"use client";

import { useState } from "react";
import { Feedback, useAction } from "@/components/browser/use-action";

/** The key-making and sealing code, loaded on the tap that creates or imports a wallet. */
export const loadSealing = () => import("./sealed-key");

/** Creates a wallet in this browser; also offered on the consent screen to a person with none. */
export function CreateWalletForm({ canSeal }: { canSeal: boolean }) {
  const { busy, error, status, run } = useAction();
  const [name, setName] = useState("");

  const create = () =>
    run(async () => {
      await (await loadSealing()).createSealedKey(name);
      setName("");
      return `Wallet “${name}” created.`;
    });

  return (
    <form
      className="card"
      onSubmit={(event) => {
        event.preventDefault();
        void create();
      }}
    >
      <h2>Create a wallet</h2>
      <p className="muted">A new key is generated in this browser and sealed under your passkey. Agent Wallet never sees it.</p>
      <label htmlFor="create-name">Wallet name</label>
      <input id="create-name" required maxLength={100} value={name} onChange={(event) => setName(event.target.value)} />
      <div>
        <button type="submit" className="primary" disabled={busy || !canSeal}>
          Create wallet
        </button>
      </div>
      <Feedback error={error} status={status} />
    </form>
  );
}
