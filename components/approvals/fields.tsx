import type { Described, Detail } from "@/lib/wallet/request-description";

/** One labelled line of the approval summary (a `dl`). */
export function Field({ label, children }: { label: React.ReactNode; children: React.ReactNode }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </>
  );
}

function DetailField({ detail }: { detail: Detail }) {
  return (
    <Field label={detail.label}>
      {detail.text}
      {detail.address && <span className="mono"> {detail.address}</span>}
      {detail.raw && <span className="muted small mono"> (raw integer {detail.raw})</span>}
    </Field>
  );
}

/** A decoded call or permit: the action in words, the warning first when there is one, then every detail. */
export function DescribedFields({ described }: { described: Described }) {
  return (
    <>
      <Field label="Action">
        <strong>{described.action}</strong>
      </Field>
      {described.warning && (
        <Field label="Warning">
          <p role="alert" className="danger-warning">
            {described.warning}
          </p>
        </Field>
      )}
      {described.details.map((detail, index) => (
        <DetailField key={index} detail={detail} />
      ))}
    </>
  );
}
