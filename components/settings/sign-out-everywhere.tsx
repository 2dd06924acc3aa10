"use client";

import { signOut } from "next-auth/react";
import { callApi } from "@/components/browser/api";
import { Feedback, useAction } from "@/components/browser/use-action";

/** Ends every session of the account, this one included, then returns to sign-in. */
export function SignOutEverywhere() {
  const { busy, error, run } = useAction();
  return (
    <div className="stack">
      <p className="muted small">
        Ends every session of your account on every device, this one included. Use it if you signed in on a device you no longer control.
      </p>
      <div>
        <button
          type="button"
          className="danger"
          disabled={busy}
          onClick={() =>
            void run(async () => {
              await callApi("/api/sessions/sign-out-everywhere");
              await signOut({ callbackUrl: "/" });
            })
          }
        >
          Sign out everywhere
        </button>
      </div>
      <Feedback error={error} />
    </div>
  );
}
