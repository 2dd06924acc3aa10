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

/** The signed-in header: where everything is, who is signed in, and the way out. */
export function AppHeader({ email }: { email: string }) {
  return (
    <header className="app-header">
      <nav aria-label="Main">
        <Link href="/wallets" className="brand">
          Agent Wallet
        </Link>
        {LINKS.map(([href, label]) => (
          <Link key={href} href={href}>
            {label}
          </Link>
        ))}
      </nav>
      <div className="who">
        <span className="muted">{email}</span> <SignOutButton />
      </div>
    </header>
  );
}
