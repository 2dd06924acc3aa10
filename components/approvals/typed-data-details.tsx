import type { FieldNode } from "@/lib/wallet/typed-data-fields";
import type { RequestDescription } from "@/lib/wallet/request-description";
import { DescribedFields, Field } from "./fields";

/** Declared fields only, nested structs and arrays as nested lists. */
function FieldTree({ fields }: { fields: FieldNode[] }) {
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
          {"fields" in field ? <FieldTree fields={field.fields} /> : <span className="mono">{field.value}</span>}
        </Field>
      ))}
    </dl>
  );
}

/** sign_typed_data: a recognised permit in words, then the domain and the message as the signature covers them. */
export function TypedDataDetails({ primaryType, domain, fields, permit }: Extract<RequestDescription, { kind: "sign_typed_data" }>) {
  return (
    <>
      {permit && <DescribedFields described={permit} />}
      <Field label="Domain">
        <FieldTree fields={domain} />
      </Field>
      <Field label={`${primaryType} fields`}>
        <FieldTree fields={fields} />
      </Field>
    </>
  );
}
