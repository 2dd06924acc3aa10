import Link from "next/link";
import { currentUser } from "@/lib/auth/session";
import { AppHeader } from "./app-header";

/**
 * A screen with nothing to do here (a page not found, a request already decided): the header stays, the words say
 * why, and one link leads back in.
 */
export async function DeadEnd({ title, children }: { title: string; children: React.ReactNode }) {
  const user = await currentUser();
  return (
    <>
      <AppHeader email={user?.email ?? null} />
      <main className="dead-end">
        <h1>{title}</h1>
        {children}
        <p>
          <Link href={user ? "/wallets" : "/"}>{user ? "Go to your wallets" : "Sign in"}</Link>
        </p>
      </main>
    </>
  );
}
