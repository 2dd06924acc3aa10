/**
 * Which passkeys can unlock each wallet (its seals), with a warning where only
 * one can: losing that passkey loses the wallet. Removing such a passkey is
 * refused by lib/auth/passkeys.ts removePasskey, which names the wallets.
 */
export function WalletUnlockers({
  wallets,
  passkeys,
}: {
  wallets: { id: string; name: string; passkeyIds: string[] }[];
  passkeys: { id: string; name: string }[];
}) {
  if (!wallets.length) return <p className="muted">You have no wallets with a sealed key yet.</p>;
  const names = new Map(passkeys.map((passkey) => [passkey.id, passkey.name]));
  return (
    <ul className="rows" aria-label="Wallet unlocking">
      {wallets.map((wallet) => {
        const unlockers = wallet.passkeyIds.map((id) => names.get(id)).filter((name): name is string => Boolean(name));
        return (
          <li key={wallet.id} className="row" aria-label={wallet.name}>
            <div>
              <strong>{wallet.name}</strong>
              <div className="small">Unlocked by {unlockers.length ? unlockers.join(", ") : "no passkey"}</div>
              {unlockers.length === 1 && (
                <p role="note" className="warning small">
                  Only {unlockers[0]} can unlock {wallet.name}. If you lose that passkey you lose this wallet: add another passkey and let
                  it unlock {wallet.name}.
                </p>
              )}
            </div>
          </li>
        );
      })}
    </ul>
  );
}
