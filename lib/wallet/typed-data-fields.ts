// The fields of EIP-712 typed data that the signature covers, and only those: the approval page walks the
// declared struct of the primary type (nested structs and arrays included) and the standard domain fields,
// never the raw message object, so nothing undeclared can be shown as if it were signed. Pure and browser-safe.
import type { TypedDataDefinition } from "viem";

/** A declared field: a value (and, for a token amount, the amount in the token's units), or nested fields. */
export type FieldNode =
  { name: string; type: string; value: string; inWords?: string } | { name: string; type: string; fields: FieldNode[] };

type Declared = Record<string, readonly { name: string; type: string }[]>;

/** The EIP-712 domain fields, in the order the standard hashes them. */
const DOMAIN_FIELDS = [
  ["name", "string"],
  ["version", "string"],
  ["chainId", "uint256"],
  ["verifyingContract", "address"],
  ["salt", "bytes32"],
] as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function fieldNode(types: Declared, name: string, type: string, value: unknown): FieldNode {
  const array = /^(.*)\[\d*\]$/.exec(type);
  if (array && Array.isArray(value)) {
    return { name, type, fields: value.map((item, index) => fieldNode(types, `${name}[${index}]`, array[1], item)) };
  }
  const struct = types[type];
  // A struct whose value is not an object has nothing declared to walk into: show the value as it is.
  if (struct && isRecord(value)) {
    return { name, type, fields: struct.map((field) => fieldNode(types, field.name, field.type, value[field.name])) };
  }
  return { name, type, value: isRecord(value) || Array.isArray(value) ? JSON.stringify(value) : String(value) };
}

/** The primary type's declared fields with their values, recursively. */
export function declaredFields(typedData: TypedDataDefinition): FieldNode[] {
  const types = typedData.types as Declared;
  const message = typedData.message as Record<string, unknown>;
  return (types[typedData.primaryType as string] ?? []).map((field) => fieldNode(types, field.name, field.type, message[field.name]));
}

/** The domain's EIP-712 fields that are present (viem derives the signed domain type from exactly these). */
export function domainFields(typedData: TypedDataDefinition): FieldNode[] {
  const domain = (typedData.domain ?? {}) as Record<string, unknown>;
  return DOMAIN_FIELDS.filter(([name]) => domain[name] !== undefined).map(([name, type]) => ({ name, type, value: String(domain[name]) }));
}
