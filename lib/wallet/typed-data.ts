// EIP-712 typed data as an agent sends it, checked so that what the person is shown is exactly what is
// signed: every value is declared by `types`, the primary type exists, the domain carries only domain
// fields, and nesting stays within a bound a screen can show. Pure and browser-safe.
import { hashTypedData, type TypedDataDefinition } from "viem";

type Field = { name: string; type: string };
export type TypedDataInput = {
  domain: Record<string, unknown>;
  types: Record<string, Field[]>;
  primaryType: string;
  message: Record<string, unknown>;
};

/** Structs within structs (arrays count as a level) deeper than this are refused: nobody can review them. */
export const MAX_TYPED_DATA_DEPTH = 8;

/** The EIP-712 domain fields and their types, in the order the standard hashes them. */
const DOMAIN_FIELDS: Record<string, string> = {
  name: "string",
  version: "string",
  chainId: "uint256",
  verifyingContract: "address",
  salt: "bytes32",
};

export class TypedDataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TypedDataError";
  }
}

/** `Type[]` or `Type[3]` → the element type and the fixed length, if any. */
function arrayOf(type: string): { element: string; length?: number } | null {
  const match = /^(.*)\[(\d*)\]$/.exec(type);
  if (!match) return null;
  return { element: match[1], ...(match[2] ? { length: Number(match[2]) } : {}) };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const INTEGER = /^(u?)int(\d*)$/;
const FIXED_BYTES = /^bytes(\d+)$/;

/** An integer as JSON can carry it exactly: a safe integer, or a decimal (or 0x hex) string. */
function integerOf(value: unknown): bigint | null {
  if (typeof value === "number") return Number.isSafeInteger(value) ? BigInt(value) : null;
  if (typeof value === "bigint") return value;
  if (typeof value === "string" && /^(-?\d+|0x[0-9a-fA-F]+)$/.test(value)) return BigInt(value);
  return null;
}

/**
 * An atomic value of its declared type, and nothing a signer would coerce: a number in a `string` field or
 * `true` in a `uint256` would be shown one way and signed another.
 */
function checkAtomic(type: string, value: unknown, path: string): void {
  const integer = INTEGER.exec(type);
  const fixed = FIXED_BYTES.exec(type);
  const bits = integer ? Number(integer[2] || 256) : 0;
  if (integer && bits >= 8 && bits <= 256 && bits % 8 === 0) {
    const number = integerOf(value);
    if (number === null) throw new TypedDataError(`${path} must be an integer (${type}): a safe integer or a decimal string`);
    const [min, max] = integer[1] ? [0n, 2n ** BigInt(bits) - 1n] : [-(2n ** BigInt(bits - 1)), 2n ** BigInt(bits - 1) - 1n];
    if (number < min || number > max) throw new TypedDataError(`${path} is out of range for ${type}`);
    return;
  }
  const expected: Record<string, [(candidate: unknown) => boolean, string]> = {
    string: [(candidate) => typeof candidate === "string", "a string"],
    bool: [(candidate) => typeof candidate === "boolean", "true or false"],
    address: [(candidate) => typeof candidate === "string" && /^0x[0-9a-fA-F]{40}$/.test(candidate), "a 20-byte 0x address"],
    bytes: [(candidate) => typeof candidate === "string" && /^0x([0-9a-fA-F]{2})*$/.test(candidate), "0x hex bytes"],
  };
  if (fixed && Number(fixed[1]) >= 1 && Number(fixed[1]) <= 32) {
    const size = Number(fixed[1]);
    expected[type] = [
      (candidate) => typeof candidate === "string" && new RegExp(`^0x[0-9a-fA-F]{${size * 2}}$`).test(candidate),
      `${size} bytes in 0x hex`,
    ];
  }
  const check = expected[type];
  if (!check) throw new TypedDataError(`${path} has type ${type}, which is neither an EIP-712 type nor declared in types`);
  if (!check[0](value)) throw new TypedDataError(`${path} must be ${check[1]} (${type})`);
}

function checkValue(types: Record<string, Field[]>, type: string, value: unknown, path: string, depth: number): void {
  const array = arrayOf(type);
  if (array) {
    if (depth >= MAX_TYPED_DATA_DEPTH) throw new TypedDataError(`${path} nests deeper than ${MAX_TYPED_DATA_DEPTH} levels`);
    if (!Array.isArray(value)) throw new TypedDataError(`${path} must be an array (${type})`);
    if (array.length !== undefined && value.length !== array.length) {
      throw new TypedDataError(`${path} must hold exactly ${array.length} items (${type}), not ${value.length}`);
    }
    value.forEach((item, index) => checkValue(types, array.element, item, `${path}[${index}]`, depth + 1));
    return;
  }
  const fields = types[type];
  if (!fields) return checkAtomic(type, value, path);
  if (depth >= MAX_TYPED_DATA_DEPTH) throw new TypedDataError(`${path} nests deeper than ${MAX_TYPED_DATA_DEPTH} levels`);
  if (!isPlainObject(value)) throw new TypedDataError(`${path} must be an object (${type})`);
  const declared = new Set(fields.map((field) => field.name));
  for (const key of Object.keys(value)) {
    if (!declared.has(key)) throw new TypedDataError(`${path}.${key} is not declared in types.${type}`);
  }
  for (const field of fields) {
    if (!(field.name in value)) throw new TypedDataError(`${path}.${field.name} is missing (declared in types.${type})`);
    checkValue(types, field.type, value[field.name], `${path}.${field.name}`, depth + 1);
  }
}

function checkDomain(input: TypedDataInput): void {
  const keys = Object.keys(input.domain);
  for (const key of keys) {
    if (!(key in DOMAIN_FIELDS)) throw new TypedDataError(`domain.${key} is not an EIP-712 domain field`);
  }
  for (const key of keys) checkAtomic(DOMAIN_FIELDS[key], input.domain[key], `domain.${key}`);
  const declared = input.types.EIP712Domain;
  if (!declared) return;
  // A declared domain type must describe exactly the domain given, with the standard types.
  for (const field of declared) {
    if (DOMAIN_FIELDS[field.name] !== field.type) {
      throw new TypedDataError(`types.EIP712Domain declares ${field.name} as ${field.type}, which is not an EIP-712 domain field`);
    }
    if (!(field.name in input.domain)) throw new TypedDataError(`domain.${field.name} is missing (declared in types.EIP712Domain)`);
  }
  const declaredNames = new Set(declared.map((field) => field.name));
  for (const key of keys) {
    if (!declaredNames.has(key)) throw new TypedDataError(`domain.${key} is not declared in types.EIP712Domain`);
  }
}

/**
 * The typed data to store and sign, or a TypedDataError naming the first offending field. The domain type is
 * dropped: viem derives it from the domain, which checkDomain has matched against the declared one.
 */
export function checkedTypedData(input: TypedDataInput): TypedDataDefinition {
  // Signing the bare domain (primaryType EIP712Domain) would ignore the message: nothing shown may go unsigned.
  if (input.primaryType === "EIP712Domain") throw new TypedDataError("primaryType must name a message type, not EIP712Domain");
  if (!input.types[input.primaryType]) throw new TypedDataError(`primaryType ${input.primaryType} is not declared in types`);
  checkDomain(input);
  checkValue(input.types, input.primaryType, input.message, "message", 0);
  const { EIP712Domain: _domainType, ...types } = input.types;
  const typedData = {
    domain: input.domain,
    types,
    primaryType: input.primaryType,
    message: input.message,
  } as unknown as TypedDataDefinition;
  try {
    hashTypedData(typedData);
  } catch (error) {
    const reason = (error as { shortMessage?: string }).shortMessage ?? (error as Error).message;
    throw new TypedDataError(`The typed data is not valid EIP-712: ${reason.split("\n")[0]}`);
  }
  return typedData;
}
