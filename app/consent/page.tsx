import { currentUser } from "@/lib/auth/session";
import { listPasskeys } from "@/lib/auth/passkeys";
import { ConsentRequestError, loadAuthorizationRequest } from "@/lib/oauth/consent";
import { listCredentials } from "@/lib/wallet/credentials";
import { listContacts } from "@/lib/wallet/address-book";
import { allowanceChains } from "@/lib/allowances/settings";
import { config } from "@/lib/config";
import { nativeCoin } from "@/lib/wallet/policy-presets";
import { whyNoAllowance } from "@/lib/allowances/offer";
import { userCodeOf } from "@/lib/oauth/device-authorization";
import { AuthPanel } from "@/components/auth/auth-panel";
import { DeadEnd } from "@/components/nav/dead-end";
import { ConsentForm } from "@/components/consent/consent-form";
import { CreateWalletForm } from "@/components/wallet/create-wallet-form";
import { pickableTokens, walletAssets } from "@/lib/prices/holdings";
import { Holdings } from "@/components/prices/holdings";

const CLOSED: Record<string, [string, string]> = {
  approved: ["Already approved", "You already approved this request. Return to the application."],
  denied: ["Already denied", "You already denied this request. Start again from the application if you changed your mind."],
  expired: ["This request expired", "Requests wait 10 minutes for a decision. Start again from the application."],
  client_revoked: ["Application revoked", "This application's access was revoked. It has to register again."],
};

function Closed({ title, message }: { title: string; message: string }) {
  return (
    <DeadEnd title={title}>
      <p>{message}</p>
    </DeadEnd>
  );
}

// Fixed: a client chooses its own name, so the name must never read as the page's (or Agent Wallet's) voice.
const HEADING = "An application wants to connect to your wallet";

export default async function ConsentPage({ searchParams }: { searchParams: Promise<{ request?: string; code?: string }> }) {
  const { request: requestId, code } = await searchParams;
  if (!requestId)
    return (
      <Closed title="No request" message="This page is opened by an application asking for access. Start again from the application." />
    );
  let request;
  try {
    request = await loadAuthorizationRequest(requestId);
  } catch (error) {
    if (error instanceof ConsentRequestError)
      return <Closed title="Unknown request" message="This authorization request does not exist. Start again from the application." />;
    throw error;
  }
  if (request.status !== "pending") {
    const [title, message] = CLOSED[request.status];
    return <Closed title={title} message={message} />;
  }

  const [user, userCode] = await Promise.all([currentUser(), request.redirectHost ? null : userCodeOf(requestId, code)]);
  const offlineRequested = request.scopes.includes("offline_access");
  const summary = (
    <dl className="summary">
      <dt>Application</dt>
      <dd>
        calls itself “{request.clientName}” <span className="muted small">(a name it chose; Agent Wallet cannot verify it)</span>
      </dd>
      {request.metadataHost && (
        <>
          <dt>Client metadata from</dt>
          <dd className="mono">{request.metadataHost}</dd>
        </>
      )}
      {request.redirectHost ? (
        <>
          <dt>Sends you back to</dt>
          <dd className="mono">{request.redirectHost}</dd>
        </>
      ) : (
        <>
          <dt>Continues on</dt>
          <dd>
            the device that showed you the code
            {userCode && (
              <>
                {" "}
                <strong>{userCode}</strong>
              </>
            )}{" "}
            (check that it is the one your terminal shows, and approve only if you started it yourself, just now)
          </dd>
        </>
      )}
      <dt>Asks for</dt>
      <dd>
        <ul>
          <li>Use Agent Wallet’s tools with the wallets you choose below</li>
          {offlineRequested && <li>Stay connected: renew its access without asking you again</li>}
        </ul>
      </dd>
    </dl>
  );

  if (!user) {
    return (
      <main>
        <h1>{HEADING}</h1>
        {summary}
        <p>Sign in, or create an account, to decide.</p>
        <AuthPanel next={`/consent?request=${encodeURIComponent(requestId)}`} />
      </main>
    );
  }

  const [credentials, passkeys, contacts] = await Promise.all([listCredentials(user.id), listPasskeys(user.id), listContacts(user.id)]);
  const canSeal = passkeys.some((passkey) => passkey.prfCapable);
  const assets = walletAssets(user.id);
  const noAllowance = credentials.some((credential) => credential.kind === "evm") ? whyNoAllowance() : null;
  // the tokens the holdings list: token caps and allowances pick them by name, not pasted as contracts
  const tokens = pickableTokens(await assets);
  return (
    <main>
      <h1>{HEADING}</h1>
      <p className="muted small">Signed in as {user.email}</p>
      {summary}
      {credentials.length > 0 && (
        <section aria-labelledby="holdings-heading">
          <h2 id="holdings-heading">What your wallets hold</h2>
          <dl className="summary">
            {credentials.map(({ id, name, address }) => (
              <div key={id}>
                <dt>{name}</dt>
                <dd>
                  <Holdings address={address as `0x${string}`} assets={assets} label={`What ${name} holds`} />
                </dd>
              </div>
            ))}
          </dl>
        </section>
      )}
      {noAllowance && (
        <p role="note" className="muted small">
          {noAllowance}
        </p>
      )}
      <ConsentForm
        key={credentials.map((credential) => credential.id).join(",")}
        requestId={requestId}
        offlineRequested={offlineRequested}
        contacts={contacts}
        allowanceChains={allowanceChains()}
        tokens={tokens}
        coin={nativeCoin(config().chains)}
        credentials={credentials.map(({ id, name, kind, address }) => ({ id, name, kind, address }))}
      />
      {credentials.length === 0 ? (
        <CreateWalletForm canSeal={canSeal} />
      ) : (
        <details>
          <summary>Create another wallet</summary>
          <CreateWalletForm canSeal={canSeal} />
        </details>
      )}
    </main>
  );
}
