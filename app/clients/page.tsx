import Link from "next/link";
import { requireUser } from "@/lib/auth/session";
import { config } from "@/lib/config";
import { listConnectedClients } from "@/lib/oauth/connected-clients";
import { listCredentials } from "@/lib/wallet/credentials";
import { listContacts } from "@/lib/wallet/address-book";
import { nativeCoin } from "@/lib/wallet/policy-presets";
import { allowanceChains } from "@/lib/allowances/settings";
import { pickableTokens, walletAssets } from "@/lib/prices/holdings";
import { AppHeader } from "@/components/nav/app-header";
import { ClientsList, CreateApiKeyForm, type ClientRow } from "@/components/clients/clients-panel";

export default async function ClientsPage() {
  const user = await requireUser("/clients");
  const [clients, credentials, contacts, assets] = await Promise.all([
    listConnectedClients(user.id),
    listCredentials(user.id),
    listContacts(user.id),
    walletAssets(user.id),
  ]);
  // as at consent: token caps and allowances pick these by name, in their units
  const tokens = pickableTokens(assets);
  // chains that offer allowances, and the wallets whose key can sign one
  const allowance = {
    chains: allowanceChains(),
    wallets: credentials.filter((credential) => credential.kind === "evm").map((credential) => credential.id),
  };
  const rows: ClientRow[] = clients.map((client) => ({
    ...client,
    connectedAt: client.connectedAt.toISOString(),
    lastUsedAt: client.lastUsedAt?.toISOString() ?? null,
  }));
  const coin = nativeCoin(config().chains);
  return (
    <>
      <AppHeader email={user.email} />
      <main>
        <h1>Clients</h1>
        <p>
          <Link href="/connect">Connect an agent</Link>: setup for Claude, VS Code, Cursor, Codex and the CLI with this wallet&apos;s
          address.
        </p>
        <h2>Connected applications</h2>
        <ClientsList
          clients={rows.filter((row) => row.kind === "oauth")}
          contacts={contacts}
          coin={coin}
          emptyText="No application is connected."
          allowance={allowance}
          tokens={tokens}
        />
        <h2>Personal API keys</h2>
        <ClientsList
          clients={rows.filter((row) => row.kind === "api_key")}
          contacts={contacts}
          coin={coin}
          emptyText="No API keys yet."
          allowance={allowance}
          tokens={tokens}
        />
        <CreateApiKeyForm
          baseUrl={config().baseUrl}
          contacts={contacts}
          coin={coin}
          allowanceChains={allowance.chains}
          tokens={tokens}
          credentials={credentials.map(({ id, name, kind, address }) => ({ id, name, kind, address }))}
        />
      </main>
    </>
  );
}
