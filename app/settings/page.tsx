import { requireUser } from "@/lib/auth/session";
import { listPasskeys } from "@/lib/auth/passkeys";
import { listCredentials } from "@/lib/wallet/credentials";
import { AppHeader } from "@/components/nav/app-header";
import { PasskeysPanel } from "@/components/settings/passkeys-panel";

export default async function SettingsPage() {
  const user = await requireUser("/settings");
  const [passkeys, credentials] = await Promise.all([listPasskeys(user.id), listCredentials(user.id)]);
  return (
    <>
      <AppHeader email={user.email} />
      <main>
        <h1>Settings</h1>
        <h2>Passkeys</h2>
        <PasskeysPanel
          wallets={credentials.filter((credential) => credential.kind === "evm").map(({ id, name, passkeyIds }) => ({ id, name, passkeyIds }))}
          passkeys={passkeys.map((passkey) => ({
            id: passkey.id,
            name: passkey.name,
            prfCapable: passkey.prfCapable,
            createdAt: passkey.createdAt.toISOString(),
            lastUsedAt: passkey.lastUsedAt?.toISOString() ?? null,
          }))}
        />
      </main>
    </>
  );
}
