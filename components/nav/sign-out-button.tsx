"use client";

import { signOut } from "next-auth/react";
import { useHydrated } from "@/components/browser/use-action";

export function SignOutButton() {
  const hydrated = useHydrated();
  return (
    <button type="button" className="link" disabled={!hydrated} onClick={() => void signOut({ callbackUrl: "/" })}>
      Sign out
    </button>
  );
}
