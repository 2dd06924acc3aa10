"use client";

import { apiKeySnippets } from "@/lib/connect/client-setup";
import { CopyButton } from "@/components/shared/copy-button";
import { SnippetFigure } from "@/components/shared/snippet";

/** A key just created, shown this once: copy it, or paste the lines that put it to work. */
export function NewApiKey({ name, apiKey, baseUrl }: { name: string; apiKey: string; baseUrl: string }) {
  return (
    <div role="status" className="ok new-api-key">
      <p>Key “{name}” created. Copy it now: it is shown only once.</p>
      <p>
        <code data-testid="new-api-key" className="mono key">
          {apiKey}
        </code>{" "}
        <CopyButton text={apiKey} what="API key" />
      </p>
      <p className="small">Ready to paste: put the key in your environment, then use it from the CLI, the SDK or an MCP client.</p>
      {apiKeySnippets(baseUrl, apiKey).map((snippet) => (
        <SnippetFigure key={snippet.what} snippet={snippet} />
      ))}
    </div>
  );
}
