import type { Ref } from "react";
import type { AllowanceReview } from "./allowance-types";
import { AnyPayeeWarning } from "./any-payee-warning";

/**
 * The allowance card: what the person signs, in their words (decoded from the fields to sign), its any-payee warning
 * set apart, and the exact terms; at consent, on /clients and on an agent's request for one alike.
 */
export function AllowanceCard({
  name,
  review,
  cardRef,
}: {
  /** the wallet's name */
  name: string;
  review: Exclude<AllowanceReview, { error: string }>;
  cardRef?: Ref<HTMLElement>;
}) {
  return (
    <section ref={cardRef} aria-label={`Allowance you sign for ${name}`} className="card allowance-card">
      <h3>The allowance you sign for {name}</h3>
      <p className="allowance-summary">{review.summary}</p>
      <AnyPayeeWarning warning={review.warning} />
      <details>
        <summary>The exact terms you sign</summary>
        <ul>
          {review.words.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      </details>
    </section>
  );
}
