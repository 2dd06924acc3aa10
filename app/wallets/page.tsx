import { requireUser } from "@/lib/auth/session";
import { config } from "@/lib/config";
import { listCredentials } from "@/lib/wallet/credentials";
import { listPasskeys } from "@/lib/auth/passkeys";
import { walletAssets } from "@/lib/prices/holdings";
import { AppHeader } from "@/components/nav/app-header";
import { Holdings } from "@/components/prices/holdings";
import { WalletsPanel } from "@/components/wallet/wallets-panel";

export default async function WalletsPage() {
  const user = await requireUser("/wallets");
  const [credentials, passkeys] = await Promise.all([listCredentials(user.id), listPasskeys(user.id)]);
  const assets = walletAssets(user.id);
  const testChain = config().testChain;
  return (
    <>
      <AppHeader email={user.email} />
      <main>
        <h1>Wallets</h1>
        <WalletsPanel
          wallets={credentials.map(({ id, name, kind, address, grantCount }) => ({ id, name, kind, address, grantCount }))}
          canSeal={passkeys.some((passkey) => passkey.prfCapable)}
          testChainId={testChain?.chainId ?? null}
          holdings={Object.fromEntries(
            credentials.map(({ id, name, address }) => [
              id,
              <Holdings key={id} address={address as `0x${string}`} assets={assets} label={`What ${name} holds`} />,
            ]),
          )}
        />
      </main>
    </>
  );
}
