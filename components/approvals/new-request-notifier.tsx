"use client";

import { useEffect, useRef, useSyncExternalStore } from "react";

type Pending = { id: string; text: string };
type Permission = NotificationPermission | "unsupported";

/** The browser's notification permission, re-read when the person answers the prompt or changes it in settings. */
function subscribe(onChange: () => void) {
  let status: PermissionStatus | null = null;
  void navigator.permissions?.query({ name: "notifications" }).then((current) => {
    status = current;
    current.addEventListener("change", onChange);
  });
  return () => status?.removeEventListener("change", onChange);
}
const currentPermission = (): Permission => (typeof Notification === "undefined" ? "unsupported" : Notification.permission);

/**
 * While the Approvals screen is open in a tab, a new pending request is announced with the browser's own
 * notification (after the person allowed it), so an agent's request does not wait unseen in another tab.
 */
export function NewRequestNotifier({ pending }: { pending: Pending[] }) {
  const seen = useRef<Set<string> | null>(null);
  const permission = useSyncExternalStore(subscribe, currentPermission, (): Permission => "unsupported");

  useEffect(() => {
    const fresh = seen.current ? pending.filter((request) => !seen.current!.has(request.id)) : [];
    seen.current = new Set(pending.map((request) => request.id));
    if (permission !== "granted") return;
    for (const request of fresh) new Notification("A request waits for your approval", { body: request.text, tag: request.id });
  }, [pending, permission]);

  if (permission !== "default") return null;
  return (
    <p className="small">
      <button type="button" onClick={() => void Notification.requestPermission()}>
        Notify me of new requests
      </button>
    </p>
  );
}
