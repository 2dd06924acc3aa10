import type { FieldNode } from "@/lib/wallet/typed-data-fields";
import type { RequestDescription } from "@/lib/wallet/request-description";
import type { ContactNames } from "@/lib/wallet/address-book";
import { AddressText, DescribedFields, Field } from "./fields";

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

/** sign_typed_data: a recognised permit in words, then the domain and the message as the signature covers them. */
export function TypedDataDetails({
  primaryType,
  domain,
  fields,
  permit,
  names,
  valued,
}: Extract<RequestDescription, { kind: "sign_typed_data" }> & { names: ContactNames; valued: boolean }) {
  const app = domain.find((field) => field.name === "name");
  return (
    <>
      {permit && <DescribedFields described={permit} names={names} valued={valued} />}
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
