/**
 * The warning an allowance for any payee carries (lib/allowances/wording.ts anyPayeeWarning), set apart from its
 * sentence as a note of its own, named for what it warns of, on the card at consent and on /clients alike.
 */
export function AnyPayeeWarning({ warning }: { warning: string | null }) {
  if (!warning) return null;
  return (
    <p role="note" aria-label="Any payee warning" className="warning any-payee-warning">
      <strong>Any payee:</strong> {warning}
    </p>
  );
}
