import Link from "next/link";
import { SignOutButton } from "./sign-out-button";

const LINKS = [
  ["/wallets", "Wallets"],
  ["/approvals", "Approvals"],
  ["/clients", "Clients"],
  ["/connect", "Connect"],
  ["/audit", "Audit"],
  ["/settings", "Settings"],
] as const;

/**
 * The header on every screen: where everything is, who is signed in, and the way out. `email: null` is a
 * visitor (the way in instead); no `email` at all is a screen that cannot know (the error boundary runs in
 * the browser), which keeps the links and leaves the person out.
 */
export function AppHeader({ email }: { email?: string | null }) {
  return (
    <header className="app-header">
      <nav aria-label="Main">
        <Link href={email === null ? "/" : "/wallets"} className="brand">
          Agent Wallet
        </Link>
        {email !== null &&
          LINKS.map(([href, label]) => (
            <Link key={href} href={href}>
              {label}
            </Link>
          ))}
      </nav>
      {email === null ? (
        <div className="who">
          <Link href="/">Sign in</Link>
        </div>
      ) : (
        email !== undefined && (
          <div className="who">
            <span className="muted">{email}</span> <SignOutButton />
          </div>
        )
      )}
    </header>
  );
}
