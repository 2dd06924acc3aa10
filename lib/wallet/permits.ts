// Token permits among EIP-712 requests: an EIP-2612 Permit lets a spender take an ERC-20 without a
// transaction, and Uniswap's Permit2 messages do the same for one or more tokens. Recognised by their exact
// declared types (not by name alone), so a look-alike struct is shown field by field and never dressed up
// as a permit. Pure and browser-safe.
import type { Address, TypedDataDefinition } from "viem";

export type PermitKind = "Permit" | "PermitSingle" | "PermitBatch" | "PermitTransferFrom" | "PermitBatchTransferFrom";

export type PermittedAmount = {
  /** null when an EIP-2612 domain names no verifyingContract: the token is then unknown. */
  token: Address | null;
  amount: bigint;
  /** The declared width of the amount (Permit2 allowances are uint160). */
  bits: number;
  /** When a Permit2 allowance lapses (seconds since the epoch). */
  expiration?: bigint;
};

export type Permit = {
  kind: PermitKind;
  /** The domain's chain, where the tokens live. */
  chainId: number | null;
  spender: Address;
  amounts: PermittedAmount[];
  /** Until when the signature can be used (seconds since the epoch). */
  deadline: bigint;
};

const DETAILS = "token:address,amount:uint160,expiration:uint48,nonce:uint48";
const PERMISSIONS = "token:address,amount:uint256";

/** The declared types each permit must have, exactly, as `name:type` lists in the standards' order. */
const SHAPES: Record<PermitKind, Record<string, string>> = {
  Permit: { Permit: "owner:address,spender:address,value:uint256,nonce:uint256,deadline:uint256" },
  PermitSingle: { PermitSingle: "details:PermitDetails,spender:address,sigDeadline:uint256", PermitDetails: DETAILS },
  PermitBatch: { PermitBatch: "details:PermitDetails[],spender:address,sigDeadline:uint256", PermitDetails: DETAILS },
  PermitTransferFrom: {
    PermitTransferFrom: "permitted:TokenPermissions,spender:address,nonce:uint256,deadline:uint256",
    TokenPermissions: PERMISSIONS,
  },
  PermitBatchTransferFrom: {
    PermitBatchTransferFrom: "permitted:TokenPermissions[],spender:address,nonce:uint256,deadline:uint256",
    TokenPermissions: PERMISSIONS,
  },
};

type Declared = Record<string, readonly { name: string; type: string }[]>;
type Values = Record<string, unknown>;

function hasShape(types: Declared, shape: Record<string, string>): boolean {
  return Object.entries(shape).every(([type, fields]) => types[type]?.map((field) => `${field.name}:${field.type}`).join(",") === fields);
}

function details(value: unknown): PermittedAmount {
  const entry = value as Values;
  return {
    token: entry.token as Address,
    amount: BigInt(entry.amount as string),
    bits: 160,
    expiration: BigInt(entry.expiration as string),
  };
}

function permissions(value: unknown): PermittedAmount {
  const entry = value as Values;
  return { token: entry.token as Address, amount: BigInt(entry.amount as string), bits: 256 };
}

function amountsOf(kind: PermitKind, message: Values, domain: Values): PermittedAmount[] {
  switch (kind) {
    case "Permit":
      return [{ token: (domain.verifyingContract as Address | undefined) ?? null, amount: BigInt(message.value as string), bits: 256 }];
    case "PermitSingle":
      return [details(message.details)];
    case "PermitBatch":
      return (message.details as unknown[]).map(details);
    case "PermitTransferFrom":
      return [permissions(message.permitted)];
    case "PermitBatchTransferFrom":
      return (message.permitted as unknown[]).map(permissions);
  }
}

/** The permit these typed data grant, or null when they are not one of the recognised permits. */
export function recognisePermit(typedData: TypedDataDefinition): Permit | null {
  const kind = typedData.primaryType as PermitKind;
  if (!Object.hasOwn(SHAPES, kind) || !hasShape(typedData.types as Declared, SHAPES[kind])) return null;
  const message = typedData.message as Values;
  const domain = (typedData.domain ?? {}) as Values;
  try {
    return {
      kind,
      chainId: domain.chainId === undefined ? null : Number(domain.chainId),
      spender: message.spender as Address,
      amounts: amountsOf(kind, message, domain),
      deadline: BigInt((kind === "PermitSingle" || kind === "PermitBatch" ? message.sigDeadline : message.deadline) as string),
    };
  } catch {
    // Values that are not integers cannot be signed either; the page then shows the declared fields as they are.
    return null;
  }
}
