"use client";

import { CopyButton } from "@/components/shared/copy-button";
import { useState, type ReactNode } from "react";
import { getAddress, isAddress } from "viem";
import { callApi } from "@/components/browser/api";
import { approveWithPasskey } from "@/components/browser/passkey";
import { Feedback, RenameControl, useAction } from "@/components/browser/use-action";
import { CreateWalletForm, loadSealing } from "./create-wallet-form";
import { ExportKey } from "./export-key";
import { DownloadRecoveryKit, ImportRecoveryKit } from "./recovery-kit";

/** Seals an imported key under the passkey, with the sealing code loaded on that tap. */
async function connectSealedKey(name: string, privateKey: `0x${string}`) {
  await (await loadSealing()).connectSealedKey(name, privateKey);
}

export type WalletRow = { id: string; name: string; kind: "evm" | "evm_watch"; address: string; grantCount: number };

/**
 * `holdings`: per wallet id, what it holds (rendered on the server, streamed in). `testChainId`: the local test chain
 * npm start runs beside the app, where each wallet can be given test funds; null when the chains are real.
 */
export function WalletsPanel({
  wallets,
  canSeal,
  holdings,
  testChainId,
}: {
  wallets: WalletRow[];
  canSeal: boolean;
  holdings: Record<string, ReactNode>;
  testChainId: number | null;
}) {
  const { busy, error, status, run } = useAction();
  const [importName, setImportName] = useState("");
  const [importKey, setImportKey] = useState("");
  const [watchName, setWatchName] = useState("");
  const [watchAddress, setWatchAddress] = useState("");

  const importKeyAction = () =>
    run(async () => {
      const key = importKey.trim().startsWith("0x") ? importKey.trim() : `0x${importKey.trim()}`;
      if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new Error("A private key is 64 hexadecimal characters, optionally starting with 0x.");
      await connectSealedKey(importName, key.toLowerCase() as `0x${string}`);
      setImportKey("");
      setImportName("");
      return `Wallet “${importName}” imported.`;
    });

  const watch = () =>
    run(async () => {
      const value = watchAddress.trim();
      if (!isAddress(value, { strict: false })) throw new Error("Enter an EVM address: 0x followed by 40 hexadecimal characters.");
      // An all-lowercase address carries no checksum; a mixed-case one must carry the right one.
      const address = value === value.toLowerCase() ? getAddress(value) : value;
      await callApi("/api/credentials", { kind: "evm_watch", name: watchName, address });
      setWatchAddress("");
      setWatchName("");
      return `Watch-only address “${watchName}” added.`;
    });

  return (
    <div className="stack">
      <Feedback error={error} status={status} />
      <section aria-labelledby="your-wallets">
        <h2 id="your-wallets">Your wallets</h2>
        {testChainId !== null && (
          <p role="note" className="muted small">
            Test chain: its coins, USDC and prices are test values, and balances reset when the app restarts.
          </p>
        )}
        {wallets.length === 0 ? (
          <p className="muted">No wallets yet.</p>
        ) : (
          <ul className="rows">
            {wallets.map((wallet) => (
              <WalletItem key={wallet.id} wallet={wallet} holdings={holdings[wallet.id]} run={run} busy={busy} testChainId={testChainId} />
            ))}
          </ul>
        )}
      </section>

      {!canSeal && (
        <p role="note" className="warning">
          None of your passkeys supports the PRF extension, which Agent Wallet needs to seal a wallet key so that only your passkey can
          unlock it. Add a passkey that supports PRF in Settings to create or import wallets. You can still add watch-only addresses.
        </p>
      )}

      <CreateWalletForm canSeal={canSeal} />

      <form
        className="card"
        onSubmit={(event) => {
          event.preventDefault();
          void importKeyAction();
        }}
      >
        <h2>Import a wallet</h2>
        <p className="muted">Paste a private key: it is checked and sealed in this browser, and never sent.</p>
        <label htmlFor="import-name">Imported wallet name</label>
        <input id="import-name" required maxLength={100} value={importName} onChange={(event) => setImportName(event.target.value)} />
        <label htmlFor="import-key">Private key</label>
        <input
          id="import-key"
          type="password"
          autoComplete="off"
          spellCheck={false}
          required
          value={importKey}
          onChange={(event) => setImportKey(event.target.value)}
        />
        <div>
          <button type="submit" disabled={busy || !canSeal}>
            Import wallet
          </button>
        </div>
      </form>

      <ImportRecoveryKit canSeal={canSeal} connect={connectSealedKey} />

      <form
        className="card"
        onSubmit={(event) => {
          event.preventDefault();
          void watch();
        }}
      >
        <h2>Watch an address</h2>
        <p className="muted">A watch-only address can be read (balance, history) but never signs.</p>
        <label htmlFor="watch-name">Watch-only name</label>
        <input id="watch-name" required maxLength={100} value={watchName} onChange={(event) => setWatchName(event.target.value)} />
        <label htmlFor="watch-address">Address</label>
        <input
          id="watch-address"
          required
          spellCheck={false}
          className="mono"
          value={watchAddress}
          onChange={(event) => setWatchAddress(event.target.value)}
        />
        <div>
          <button type="submit" disabled={busy}>
            Add watch-only address
          </button>
        </div>
      </form>
    </div>
  );
}

function WalletItem({
  wallet,
  holdings,
  run,
  busy,
  testChainId,
}: {
  wallet: WalletRow;
  holdings: ReactNode;
  run: (action: () => Promise<string | void>) => Promise<boolean>;
  busy: boolean;
  testChainId: number | null;
}) {
  return (
    <li className="row">
      <div>
        <strong>{wallet.name}</strong> <span className="badge">{wallet.kind === "evm" ? "key sealed by passkey" : "watch-only"}</span>
        <div className="small">
          <span className="mono">{wallet.address}</span> <CopyButton text={wallet.address} what={`address of ${wallet.name}`} />
        </div>
        {holdings}
        {wallet.grantCount > 0 && (
          <div className="muted small">
            Granted to {wallet.grantCount} client{wallet.grantCount === 1 ? "" : "s"}
          </div>
        )}
      </div>
      <div className="actions">
        {testChainId !== null && (
          <button
            type="button"
            disabled={busy}
            aria-label={`Add test funds to ${wallet.name}`}
            onClick={() =>
              void run(async () => {
                const added = await callApi<{ ether: string; usdc: string }>(`/api/credentials/${wallet.id}/test-funds`, {
                  chainId: testChainId,
                });
                return `Added ${added.ether} test ETH and ${added.usdc} test USDC to ${wallet.name}.`;
              })
            }
          >
            Add test funds
          </button>
        )}
        {wallet.kind === "evm" && <ExportKey credentialId={wallet.id} name={wallet.name} />}
        {wallet.kind === "evm" && <DownloadRecoveryKit credentialId={wallet.id} name={wallet.name} />}
        <RenameControl
          name={wallet.name}
          onSave={(name) =>
            run(async () => {
              // Wallet names appear in approval headlines: a new one needs the passkey, bound to that name.
              const assertion = await approveWithPasskey(`/api/credentials/${wallet.id}/options`, { action: "rename", name });
              await callApi(`/api/credentials/${wallet.id}`, { name, assertion }, "PATCH");
              return "Wallet renamed.";
            })
          }
        />
        <button
          type="button"
          className="danger"
          disabled={busy}
          onClick={() => {
            if (
              window.confirm(
                `Remove ${wallet.name}? Agents lose access to it at once.` +
                  (wallet.kind === "evm" ? " Without a backup of its key, its funds are lost." : ""),
              )
            ) {
              void run(async () => {
                const assertion = await approveWithPasskey(`/api/credentials/${wallet.id}/options`, { action: "remove" });
                await callApi(`/api/credentials/${wallet.id}`, { assertion }, "DELETE");
              });
            }
          }}
        >
          Remove {wallet.name}
        </button>
      </div>
    </li>
  );
}
