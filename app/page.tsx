import { redirect } from "next/navigation";
import { currentUser } from "@/lib/auth/session";
import { safeNextPath } from "@/lib/http/next-path";
import { AuthPanel } from "@/components/auth/auth-panel";

export default async function Home({ searchParams }: { searchParams: Promise<{ next?: string }> }) {
  const next = safeNextPath((await searchParams).next);
  if (await currentUser()) redirect(next);
  return (
    <main>
      <h1>Agent Wallet</h1>
      <p>
        A non-custodial wallet for AI agents. Your keys are sealed under your passkey, and every signature an agent asks for waits for you.
      </p>
      <AuthPanel next={next} />
    </main>
  );
}
