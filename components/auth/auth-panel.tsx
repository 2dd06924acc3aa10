"use client";

import { useState } from "react";
import { useRouter } from "next/navigation";
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import { callApi, messageOf } from "@/components/browser/api";
import { useHydrated } from "@/components/browser/use-action";

/** The passkey ceremonies and the session's sign-in, loaded on a tap (with the server's options) rather than with the page. */
const loadCeremonies = () => Promise.all([import("@simplewebauthn/browser"), import("next-auth/react")]);

/** Sign up with an email and a new passkey, or sign in with an existing one. */
export function AuthPanel({ next }: { next: string }) {
  const router = useRouter();
  const [email, setEmail] = useState("");
  const hydrated = useHydrated();
  const [working, setBusy] = useState(false);
  const busy = working || !hydrated;
  const [error, setError] = useState<string | null>(null);

  async function finish(mode: "sign-up" | "sign-in", response: unknown) {
    const [, { signIn }] = await loadCeremonies();
    const result = await signIn("passkey", { redirect: false, mode, response: JSON.stringify(response) });
    if (!result || result.error) throw new Error(result?.error ?? "Sign-in failed");
    router.replace(next);
    router.refresh();
  }

  async function run(action: () => Promise<void>) {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (caught) {
      setError(messageOf(caught));
      setBusy(false);
    }
  }

  const signUp = () =>
    run(async () => {
      const [[{ startRegistration }], optionsJSON] = await Promise.all([
        loadCeremonies(),
        callApi<PublicKeyCredentialCreationOptionsJSON>("/api/webauthn/sign-up", { email }),
      ]);
      await finish("sign-up", await startRegistration({ optionsJSON }));
    });

  const signInWithPasskey = () =>
    run(async () => {
      const [[{ startAuthentication }], optionsJSON] = await Promise.all([
        loadCeremonies(),
        callApi<PublicKeyCredentialRequestOptionsJSON>("/api/webauthn/sign-in", {}),
      ]);
      await finish("sign-in", await startAuthentication({ optionsJSON }));
    });

  return (
    <div className="stack">
      <section className="card">
        <h2>Sign in</h2>
        <p className="muted">Use the passkey you created for Agent Wallet. No password, no username.</p>
        <button type="button" className="primary" onClick={signInWithPasskey} disabled={busy}>
          Sign in with passkey
        </button>
      </section>
      <section className="card">
        <h2>New here?</h2>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void signUp();
          }}
        >
          <label htmlFor="email">Email</label>
          <input
            id="email"
            type="email"
            autoComplete="email webauthn"
            required
            value={email}
            onChange={(event) => setEmail(event.target.value)}
          />
          <div>
            <button type="submit" className="primary" disabled={busy}>
              Create account with passkey
            </button>
          </div>
        </form>
      </section>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </div>
  );
}
