import type { Snippet } from "@/lib/connect/client-setup";
import { CopyButton } from "./copy-button";

/** A setup snippet as people paste it: what it is, its Copy button, and the code, wrapping on a phone. */
export function SnippetFigure({ snippet }: { snippet: Snippet }) {
  return (
    <figure className="snippet">
      <figcaption>
        <span className="small muted">{snippet.what}</span> <CopyButton text={snippet.code} what={snippet.what} />
      </figcaption>
      <pre>
        <code>{snippet.code}</code>
      </pre>
    </figure>
  );
}
