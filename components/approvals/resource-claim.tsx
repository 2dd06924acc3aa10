import { escapedText } from "@/lib/text/visible-text";
import { resourceParts } from "@/lib/x402/requirement";
import { Field } from "./fields";

/**
 * What an x402 payment pays for, as the merchant named it: its host apart from its path, both said to be the merchant's
 * claim (nothing checks what the address serves). Hidden characters in either are shown.
 */
export function ResourceClaim({ url, description }: { url: string; description: string | null }) {
  const parts = resourceParts(url);
  return (
    <Field label="Pays for">
      {parts ? (
        <span className="resource-claim">
          <span className="resource-host">
            <strong>{escapedText(parts.host)}</strong>
          </span>{" "}
          <span className="mono small resource-path">{escapedText(parts.path)}</span>
        </span>
      ) : (
        <span className="mono">{escapedText(url)}</span>
      )}
      {description ? <span className="resource-description"> “{escapedText(description)}”</span> : null}
      <span className="muted small resource-note">
        {" "}
        The merchant&apos;s claim: the address and words are the merchant&apos;s, nothing checks them.
      </span>
    </Field>
  );
}
