import { requireUser } from "@/lib/auth/session";
import { listPasskeys } from "@/lib/auth/passkeys";
import { AppHeader } from "@/components/nav/app-header";
import { PasskeysPanel } from "@/components/settings/passkeys-panel";

export default async function SettingsPage() {
  const user = await requireUser("/settings");
  const passkeys = await listPasskeys(user.id);
  return (
    <>
      <AppHeader email={user.email} />
      <main>
        <h1>Settings</h1>
        <h2>Passkeys</h2>
        <PasskeysPanel
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
