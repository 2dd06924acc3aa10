import type { ContactNames } from "@/lib/wallet/address-book";
import type { Described, Detail, Executions } from "@/lib/wallet/request-description";
import { Money } from "@/components/prices/money";
import { runLabel } from "@/lib/wallet/headline";

/** One labelled line of the approval summary (a `dl`). */
export function Field({ label, children }: { label: React.ReactNode; children: React.ReactNode }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </>
  );
}

/** An address in full, after the person's own name for it when their address book has one. */
export function AddressText({ address, names }: { address: string; names: ContactNames }) {
  const name = names[address.toLowerCase()];
  return (
    <>
      {name && (
        <span className="badge contact" title="Your name for this address (address book)">
          {name}
        </span>
      )}{" "}
      <span className="mono">{address}</span>
    </>
  );
}

export function DetailField({ detail, names, valued }: { detail: Detail; names: ContactNames; valued: boolean }) {
  return (
    <Field label={detail.label}>
      {detail.text}
      {valued && detail.value && (
        <Money
          chainId={detail.value.chainId}
          token={detail.value.token}
          amount={BigInt(detail.value.amount)}
          decimals={detail.value.decimals}
        />
      )}
      {detail.address && <AddressText address={detail.address} names={names} />}
      {detail.raw && <span className="muted small mono"> (raw integer {detail.raw})</span>}
    </Field>
  );
}

/**
 * A decoded call or permit: the action in words, the warning first when there is one, then every detail; `valued`,
 * amounts with their value in money today (only while the request waits: today's value is not what was decided on).
 */
export function DescribedFields({ described, names, valued }: { described: Described; names: ContactNames; valued: boolean }) {
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
        <DetailField key={index} detail={detail} names={names} valued={valued} />
      ))}
    </>
  );
}

/**
 * What the DeleGator would run: each account's calls, every one described as a transaction's call is, nested under whose
 * account runs them ("Run from your wallet"); or, when they cannot be read, a warning saying why.
 */
export function ExecutionsFields({ executions, names, valued }: { executions: Executions; names: ContactNames; valued: boolean }) {
  if (executions.unreadable) {
    return (
      <Field label="Action">
        <p role="alert" className="danger-warning">
          <strong>Calls from your wallet that cannot be read:</strong> {executions.unreadable}. Nothing here can say what they would move:
          approve only if you know exactly what they do.
        </p>
      </Field>
    );
  }
  return executions.runs.map((run, index) => (
    <Field key={index} label={runLabel(run, names)}>
      {run.calls.map((call, number) => (
        <dl key={number} className="nested" aria-label={`Call ${number + 1} of ${run.calls.length}`}>
          <DescribedFields described={call} names={names} valued={valued} />
        </dl>
      ))}
    </Field>
  ));
}
