// Token permits among EIP-712 requests: an EIP-2612 or DAI-style Permit lets a spender take an ERC-20 without a
// transaction, Uniswap's Permit2 messages do the same for one or more tokens, and an EIP-3009 authorization (USDC,
// EURC) is a signed transfer. Recognised by their exact declared types (not by name alone), so a look-alike
// struct is shown field by field and never dressed up as a permit. Pure and browser-safe.
import { maxUint256, type Address, type TypedDataDefinition } from "viem";

export type PermitKind =
  | "Permit"
  | "DaiPermit"
  | "PermitSingle"
  | "PermitBatch"
  | "PermitTransferFrom"
  | "PermitBatchTransferFrom"
  | "PermitWitnessTransferFrom"
  | "PermitBatchWitnessTransferFrom"
  | "TransferWithAuthorization"
  | "ReceiveWithAuthorization";

export type PermittedAmount = {
  /** null when a token's own permit names no verifyingContract: the token is then unknown. */
  token: Address | null;
  amount: bigint;
  /** When a Permit2 allowance lapses (seconds since the epoch). */
  expiration?: bigint;
};

export type Permit = {
  kind: PermitKind;
  /** The domain's chain, where the tokens live. */
  chainId: number | null;
  /** Who may take the tokens; for a transfer authorization, who receives them. */
  spender: Address;
  amounts: PermittedAmount[];
  /** Until when the signature can be used (seconds since the epoch); null: for ever (a DAI permit's expiry 0). */
  deadline: bigint | null;
  /** A transfer authorization cannot be used before this (seconds since the epoch). */
  validAfter?: bigint;
};

const DETAILS = "token:address,amount:uint160,expiration:uint48,nonce:uint48";
const PERMISSIONS = "token:address,amount:uint256";
const AUTHORIZATION = "from:address,to:address,value:uint256,validAfter:uint256,validBefore:uint256,nonce:bytes32";
const TRANSFER_FROM = "spender:address,nonce:uint256,deadline:uint256";

/**
 * Typed data of a known kind: its primary type and the declared types it must have, exactly, as `name:type` lists in
 * the standards' order. A witness transfer's primary type ends with one more field of the integrator's own type.
 */
export type TypedDataShape = { primaryType: string; types: Record<string, string>; witness?: true };

/** Each permit's shape. */
const SHAPES: Record<PermitKind, TypedDataShape> = {
  Permit: { primaryType: "Permit", types: { Permit: "owner:address,spender:address,value:uint256,nonce:uint256,deadline:uint256" } },
  DaiPermit: { primaryType: "Permit", types: { Permit: "holder:address,spender:address,nonce:uint256,expiry:uint256,allowed:bool" } },
  PermitSingle: {
    primaryType: "PermitSingle",
    types: { PermitSingle: "details:PermitDetails,spender:address,sigDeadline:uint256", PermitDetails: DETAILS },
  },
  PermitBatch: {
    primaryType: "PermitBatch",
    types: { PermitBatch: "details:PermitDetails[],spender:address,sigDeadline:uint256", PermitDetails: DETAILS },
  },
  PermitTransferFrom: {
    primaryType: "PermitTransferFrom",
    types: { PermitTransferFrom: `permitted:TokenPermissions,${TRANSFER_FROM}`, TokenPermissions: PERMISSIONS },
  },
  PermitBatchTransferFrom: {
    primaryType: "PermitBatchTransferFrom",
    types: { PermitBatchTransferFrom: `permitted:TokenPermissions[],${TRANSFER_FROM}`, TokenPermissions: PERMISSIONS },
  },
  PermitWitnessTransferFrom: {
    primaryType: "PermitWitnessTransferFrom",
    types: { PermitWitnessTransferFrom: `permitted:TokenPermissions,${TRANSFER_FROM}`, TokenPermissions: PERMISSIONS },
    witness: true,
  },
  PermitBatchWitnessTransferFrom: {
    primaryType: "PermitBatchWitnessTransferFrom",
    types: { PermitBatchWitnessTransferFrom: `permitted:TokenPermissions[],${TRANSFER_FROM}`, TokenPermissions: PERMISSIONS },
    witness: true,
  },
  TransferWithAuthorization: { primaryType: "TransferWithAuthorization", types: { TransferWithAuthorization: AUTHORIZATION } },
  ReceiveWithAuthorization: { primaryType: "ReceiveWithAuthorization", types: { ReceiveWithAuthorization: AUTHORIZATION } },
};

type Declared = Record<string, readonly { name: string; type: string }[]>;
type Values = Record<string, unknown>;

/** True when the typed data is of exactly this shape (its primary type, and each declared type field by field). */
export function hasShape(typedData: TypedDataDefinition, shape: TypedDataShape): boolean {
  const types = typedData.types as Declared;
  return (
    typedData.primaryType === shape.primaryType &&
    Object.entries(shape.types).every(([type, fields]) => {
      const declared = types[type]?.map((field) => `${field.name}:${field.type}`) ?? [];
      if (!(shape.witness && type === shape.primaryType)) return declared.join(",") === fields;
      // A witness transfer: exactly one more field, of a struct type declared beside the standard ones.
      const witness = types[type]?.at(-1)?.type ?? "";
      return declared.slice(0, -1).join(",") === fields && Object.hasOwn(types, witness) && types[witness] !== undefined;
    })
  );
}

const integer = (value: unknown) => BigInt(value as string);

function details(value: unknown): PermittedAmount {
  const entry = value as Values;
  return { token: entry.token as Address, amount: integer(entry.amount), expiration: integer(entry.expiration) };
}

function permissions(value: unknown): PermittedAmount {
  const entry = value as Values;
  return { token: entry.token as Address, amount: integer(entry.amount) };
}

/** What a permit of `kind` grants: who, how much of which token, until when. */
function read(kind: PermitKind, message: Values, domain: Values): Omit<Permit, "kind" | "chainId"> {
  const ownToken = (domain.verifyingContract as Address | undefined) ?? null;
  switch (kind) {
    case "Permit":
      return {
        spender: message.spender as Address,
        amounts: [{ token: ownToken, amount: integer(message.value) }],
        deadline: integer(message.deadline),
      };
    case "DaiPermit": {
      const expiry = integer(message.expiry);
      // DAI's permit allows everything or revokes: `allowed` is the whole amount.
      const amount = message.allowed === true ? maxUint256 : 0n;
      return { spender: message.spender as Address, amounts: [{ token: ownToken, amount }], deadline: expiry === 0n ? null : expiry };
    }
    case "PermitSingle":
    case "PermitBatch":
      return {
        spender: message.spender as Address,
        amounts: [message.details].flat().map(details),
        deadline: integer(message.sigDeadline),
      };
    case "PermitTransferFrom":
    case "PermitBatchTransferFrom":
    case "PermitWitnessTransferFrom":
    case "PermitBatchWitnessTransferFrom":
      return {
        spender: message.spender as Address,
        amounts: [message.permitted].flat().map(permissions),
        deadline: integer(message.deadline),
      };
    case "TransferWithAuthorization":
    case "ReceiveWithAuthorization":
      return {
        spender: message.to as Address,
        amounts: [{ token: ownToken, amount: integer(message.value) }],
        deadline: integer(message.validBefore),
        validAfter: integer(message.validAfter),
      };
  }
}

/** The permit these typed data grant, or null when they are not one of the recognised permits. */
export function recognisePermit(typedData: TypedDataDefinition): Permit | null {
  const kind = (Object.keys(SHAPES) as PermitKind[]).find((candidate) => hasShape(typedData, SHAPES[candidate]));
  if (!kind) return null;
  const domain = (typedData.domain ?? {}) as Values;
  try {
    return {
      kind,
      chainId: domain.chainId === undefined ? null : Number(domain.chainId),
      ...read(kind, typedData.message as Values, domain),
    };
  } catch {
    // Values that are not integers cannot be signed either; the page then shows the declared fields as they are.
    return null;
  }
}
