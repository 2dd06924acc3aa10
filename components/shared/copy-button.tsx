"use client";

import { useState } from "react";

/** Copies `text` (an address, a hash, a setup snippet) and says so; the name says what is copied. */
export function CopyButton({ text, what }: { text: string; what: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="copy small"
      onClick={() =>
        void navigator.clipboard.writeText(text).then(() => {
          setCopied(true);
          setTimeout(() => setCopied(false), 2000);
        })
      }
    >
      {copied ? "Copied" : `Copy ${what}`}
    </button>
  );
}
