"use client";

import { useState } from "react";
import { callApi, messageOf } from "@/components/browser/api";
import { useHydrated } from "@/components/browser/use-action";

/** The code a device shows: checked by the server, then the consent screen decides on that device's request. */
export function DeviceCodeForm({ initialCode }: { initialCode: string }) {
  const [code, setCode] = useState(initialCode);
  const hydrated = useHydrated();
  const [working, setWorking] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function submit(event: React.FormEvent) {
    event.preventDefault();
    setWorking(true);
    setError(null);
    try {
      const { location } = await callApi<{ location: string }>("/api/device", { userCode: code });
      window.location.assign(location);
    } catch (caught) {
      setError(messageOf(caught));
      setWorking(false);
    }
  }

  return (
    <form className="stack" onSubmit={(event) => void submit(event)}>
      <label htmlFor="user-code">Code</label>
      {/* A link or QR code can bring a code someone else chose (RFC 8628 §5.4): the person compares it. */}
      <p id="user-code-check" className="muted small">
        Check that this code matches the one your terminal shows.
      </p>
      <input
        id="user-code"
        aria-describedby="user-code-check"
        className="mono"
        autoComplete="off"
        autoCapitalize="characters"
        spellCheck={false}
        placeholder="XXXX-XXXX"
        value={code}
        onChange={(change) => setCode(change.target.value)}
      />
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <div className="actions">
        <button type="submit" className="primary" disabled={working || !hydrated || !code.trim()}>
          Continue
        </button>
      </div>
    </form>
  );
}
