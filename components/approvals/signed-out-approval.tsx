import { AppHeader } from "@/components/nav/app-header";
import { AuthPanel } from "@/components/auth/auth-panel";

/**
 * An approval link opened by nobody signed in: that a request waits and whose it is, and the way in, which
 * comes back to this page. Nothing is looked up, so a visitor learns no amount, recipient or client — not
 * even whether the request exists (docs/security.md).
 */
export function SignedOutApproval({ path }: { path: string }) {
  return (
    <>
      <AppHeader email={null} />
      <main className="approval">
        <h1>An approval request is waiting</h1>
        <p className="headline">
          An agent asked for a signature from a wallet kept in Agent Wallet, and it waits for the wallet&apos;s owner.
        </p>
        <p>
          If the agent is yours, sign in with your passkey to see what it asks and approve or reject it. You come back to this request once
          you are signed in. What it asks is shown only to its owner.
        </p>
        <AuthPanel next={path} />
      </main>
    </>
  );
}
