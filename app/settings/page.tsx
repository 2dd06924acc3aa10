import { requireUser } from "@/lib/auth/session";
import { listPasskeys } from "@/lib/auth/passkeys";
import { listCredentials } from "@/lib/wallet/credentials";
import { listContacts } from "@/lib/wallet/address-book";
import { AppHeader } from "@/components/nav/app-header";
import { PasskeysPanel } from "@/components/settings/passkeys-panel";
import { AddressBook } from "@/components/settings/address-book";
import { SignOutEverywhere } from "@/components/settings/sign-out-everywhere";
import { WalletUnlockers } from "@/components/settings/wallet-unlockers";

export default async function SettingsPage() {
  const user = await requireUser("/settings");
  const [passkeys, credentials, contacts] = await Promise.all([listPasskeys(user.id), listCredentials(user.id), listContacts(user.id)]);
  const wallets = credentials
    .filter((credential) => credential.kind === "evm")
    .map(({ id, name, passkeyIds }) => ({ id, name, passkeyIds }));
  return (
    <>
      <AppHeader email={user.email} />
      <main>
        <h1>Settings</h1>
        <h2>Passkeys</h2>
        <PasskeysPanel
          wallets={wallets}
          passkeys={passkeys.map((passkey) => ({
            id: passkey.id,
            name: passkey.name,
            prfCapable: passkey.prfCapable,
            createdAt: passkey.createdAt.toISOString(),
            lastUsedAt: passkey.lastUsedAt?.toISOString() ?? null,
          }))}
        />
        <h2>Wallet unlocking</h2>
        <WalletUnlockers wallets={wallets} passkeys={passkeys} />
        <h2>Address book</h2>
        <AddressBook contacts={contacts} />
        <h2>Sessions</h2>
        <SignOutEverywhere />
      </main>
    </>
  );
}
