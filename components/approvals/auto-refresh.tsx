"use client";

import { useEffect } from "react";
import { useRouter } from "next/navigation";

/** Re-renders the server component every few seconds, so new requests appear without a reload. */
export function AutoRefresh({ seconds = 2 }: { seconds?: number }) {
  const router = useRouter();
  useEffect(() => {
    const timer = setInterval(() => router.refresh(), seconds * 1000);
    return () => clearInterval(timer);
  }, [router, seconds]);
  return null;
}
