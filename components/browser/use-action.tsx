"use client";

import { useState, useSyncExternalStore } from "react";
import { useRouter } from "next/navigation";
import { messageOf } from "./api";

/**
 * False until React has hydrated the page. Buttons stay disabled until then,
 * so that an early click is not silently lost (and test drivers wait for it).
 */
export function useHydrated(): boolean {
  return useSyncExternalStore(
    noSubscription,
    () => true,
    () => false,
  );
}

function noSubscription() {
  return () => {};
}

/**
 * One user action at a time: busy while it runs, its outcome as a status or an
 * error, and the server components re-rendered after it succeeded.
 */
export function useAction() {
  const router = useRouter();
  const hydrated = useHydrated();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);

  async function run(action: () => Promise<string | void>): Promise<boolean> {
    setBusy(true);
    setError(null);
    setStatus(null);
    try {
      setStatus((await action()) ?? null);
      router.refresh();
      return true;
    } catch (caught) {
      setError(messageOf(caught));
      return false;
    } finally {
      setBusy(false);
    }
  }

  return { busy: busy || !hydrated, error, status, run, setError };
}

/** The outcome of the last action, announced to assistive technology. */
export function Feedback({ error, status }: { error: string | null; status?: string | null }) {
  return (
    <>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {status && (
        <p role="status" className="ok">
          {status}
        </p>
      )}
    </>
  );
}

/** "Rename <name>" that opens a small form labelled "New name for <name>". */
export function RenameControl({ name, onSave }: { name: string; onSave: (next: string) => Promise<unknown> }) {
  const hydrated = useHydrated();
  const [open, setOpen] = useState(false);
  const [value, setValue] = useState(name);
  const id = `rename-${name.replace(/\W+/g, "-")}`;
  if (!open) {
    return (
      <button type="button" disabled={!hydrated} onClick={() => setOpen(true)}>
        Rename {name}
      </button>
    );
  }
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        void onSave(value).then((saved) => saved !== false && setOpen(false));
      }}
    >
      <label htmlFor={id}>New name for {name}</label>
      <input id={id} required maxLength={100} value={value} onChange={(event) => setValue(event.target.value)} />
      <button type="submit">Save name</button>
    </form>
  );
}
