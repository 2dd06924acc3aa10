import { visibleSegments } from "@/lib/text/visible-text";

/**
 * A message to sign as the person reads it: each character they could not see, or that would reorder what they see,
 * shown by its code point (⟨U+202E⟩), with a warning. Only the display is escaped; the signature covers the message
 * exactly as the agent sent it.
 */
export function MessageText({ message }: { message: string }) {
  const segments = visibleSegments(message);
  const hidden = segments.filter((segment) => "hidden" in segment).length;
  return (
    <>
      {hidden > 0 && (
        <p role="note" className="warning">
          <strong>
            This message holds {hidden === 1 ? "a character" : `${hidden} characters`} you could not see or that change the direction of
            text,
          </strong>{" "}
          shown here as ⟨U+…⟩. Elsewhere it may read differently from what you see. The signature covers the message with{" "}
          {hidden === 1 ? "it" : "them"}.
        </p>
      )}
      <pre className="message">
        {segments.map((segment, index) =>
          "text" in segment ? (
            segment.text
          ) : (
            <mark key={index} className="hidden-character" title={`Hidden character ${segment.hidden}`}>
              ⟨{segment.hidden}⟩
            </mark>
          ),
        )}
      </pre>
    </>
  );
}
