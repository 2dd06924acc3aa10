"use client";

import { AppHeader } from "@/components/nav/app-header";

/** A screen that failed to render: the header stays, and trying again is the way forward (nothing of the error is shown). */
export default function ErrorPage({ reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <>
      <AppHeader />
      <main className="dead-end">
        <h1>Something went wrong</h1>
        <p>This screen could not be shown. Try again; if it keeps failing, come back in a moment.</p>
        <p>
          <button type="button" className="primary" onClick={reset}>
            Try again
          </button>
        </p>
      </main>
    </>
  );
}
