import type { FieldNode } from "@/lib/wallet/typed-data-fields";
import type { RequestDescription } from "@/lib/wallet/request-description";
import type { ContactNames } from "@/lib/wallet/address-book";
import { listedTokens } from "@/lib/wallet/chains";
import { AddressText, DescribedFields, DetailField, ExecutionsFields, Field } from "./fields";
import { ResourceClaim } from "./resource-claim";

/** Whether the domain's verifying contract is a token the chain's settings list (CHAINS' `tokens`). */
function verifyingContractListed(domain: FieldNode[]): boolean {
  const valueOf = (name: string) => {
    const field = domain.find((entry) => entry.name === name);
    return field && "value" in field ? String(field.value) : null;
  };
  const contract = valueOf("verifyingContract")?.toLowerCase();
  const chainId = Number(valueOf("chainId"));
  return Boolean(contract && Number.isSafeInteger(chainId) && listedTokens(chainId).has(contract));
}

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
  // The domain of a token the operator listed for the chain is that token's own: its name is not an app's claim.
  const listedToken = verifyingContractListed(domain);
  const granted = permit ?? delegation;
  return (
    <>
      {payment && <ResourceClaim url={payment.resource.url} description={payment.resource.description} />}
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
          {listedToken ? (
            <>
              “{app.value}” <span className="muted small">(the token contract this service lists for the chain)</span>
            </>
          ) : (
            <>
              calls itself “{app.value}” <span className="muted small">(a name the app chose; nothing checks it)</span>
            </>
          )}
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
