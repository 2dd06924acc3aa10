"use client";

import { useHydrated } from "@/components/browser/use-action";

/** On every screen: next-auth's browser code comes only with the tap. */
export function SignOutButton() {
  const hydrated = useHydrated();
  return (
    <button
      type="button"
      className="link"
      disabled={!hydrated}
      onClick={() => void import("next-auth/react").then(({ signOut }) => signOut({ callbackUrl: "/" }))}
    >
      Sign out
    </button>
  );
}
