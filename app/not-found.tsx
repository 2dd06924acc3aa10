import Link from "next/link";
import { currentUser } from "@/lib/auth/session";
import { AppHeader } from "@/components/nav/app-header";

/** Any address that leads nowhere: the header stays, and one link leads back in. */
export default async function NotFound() {
  const user = await currentUser();
  return (
    <>
      <AppHeader email={user?.email ?? null} />
      <main className="dead-end">
        <h1>Page not found</h1>
        <p>There is nothing at this address. It may have been mistyped, or the page has moved.</p>
        <p>
          <Link href={user ? "/wallets" : "/"}>{user ? "Go to your wallets" : "Sign in"}</Link>
        </p>
      </main>
    </>
  );
}
