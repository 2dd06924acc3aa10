import type { FieldNode } from "@/lib/wallet/typed-data-fields";
import type { RequestDescription } from "@/lib/wallet/request-description";
import type { ContactNames } from "@/lib/wallet/address-book";
import { escapedText } from "@/lib/text/visible-text";
import { AddressText, DescribedFields, DetailField, ExecutionsFields, Field } from "./fields";

/** Declared fields only, nested structs and arrays as nested lists. */
function FieldTree({ fields, names }: { fields: FieldNode[]; names: ContactNames }) {
  return (
    <dl className="nested">
      {fields.map((field, index) => (
        <Field
          key={index}
          label={
            <>
              {field.name} <span className="muted small">{field.type}</span>
            </>
          }
        >
          {"fields" in field ? (
            <FieldTree fields={field.fields} names={names} />
          ) : field.type === "address" ? (
            <AddressText address={field.value} names={names} />
          ) : field.inWords ? (
            <>
              {field.inWords} <span className="muted small mono">(raw integer {field.value})</span>
            </>
          ) : (
            <span className="mono">{field.value}</span>
          )}
        </Field>
      ))}
    </dl>
  );
}

/**
 * sign_typed_data: a recognised permit, delegation or user operation in words, then the domain and the message as the
 * signature covers them.
 */
export function TypedDataDetails({
  primaryType,
  domain,
  fields,
  permit,
  delegation,
  operation,
  payment,
  names,
  valued,
}: Extract<RequestDescription, { kind: "sign_typed_data" }> & { names: ContactNames; valued: boolean }) {
  const app = domain.find((field) => field.name === "name");
  const granted = permit ?? delegation;
  return (
    <>
      {payment && (
        <Field label="Pays for">
          <span className="mono">{escapedText(payment.resource.url)}</span>
          {payment.resource.description ? ` (${escapedText(payment.resource.description)})` : ""}
        </Field>
      )}
      {granted && <DescribedFields described={granted} names={names} valued={valued} />}
      {operation && (
        <>
          <ExecutionsFields executions={operation} names={names} valued={valued} />
          {operation.details.map((detail, index) => (
            <DetailField key={index} detail={detail} names={names} valued={valued} />
          ))}
        </>
      )}
      {app && "value" in app && (
        <Field label="App">
          calls itself “{app.value}” <span className="muted small">(a name the app chose; nothing checks it)</span>
        </Field>
      )}
      <Field label="Domain">
        <FieldTree fields={domain} names={names} />
      </Field>
      <Field label={`${primaryType} fields`}>
        <FieldTree fields={fields} names={names} />
      </Field>
    </>
  );
}
