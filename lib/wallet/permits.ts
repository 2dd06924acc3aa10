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
  /** A transfer authorization (or an x402 Permit2 payment) cannot be used before this (seconds since the epoch). */
  validAfter?: bigint;
  /**
   * A Permit2 witness transfer whose spender is x402's exact proxy: the one address the proxy pays (the witness's
   * `to`), the whole amount permitted. The typed data is then a payment to it, as a transfer authorization is.
   */
  payee?: Address;
};

/** Uniswap's Permit2, at the same address on every chain. */
export const PERMIT2: Address = "0x000000000022D473030F116dDEE9F6B43aC78BA3";
/**
 * x402's exact Permit2 proxy, at its CREATE2 address (the same on every chain, so only its code answers there): it
 * spends a Permit2 witness transfer only towards the witness's `to`, for the amount permitted.
 */
export const X402_EXACT_PERMIT2_PROXY: Address = "0x402085c248EeA27D92E8b30b2C58ed07f9E20001";
/** The witness x402's exact proxy reconstructs: a payment to `to`, not before `validAfter`. */
const X402_WITNESS = "to:address,validAfter:uint256";

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

/** Declared fields from a `name:type` list. */
const fields = (list: string) => list.split(",").map((field) => ({ name: field.split(":")[0], type: field.split(":")[1] }));

/** What an x402 Permit2 payment pays: `amount` of `token` to `payee`, valid until `deadline` (seconds). */
export type Permit2Payment = { chainId: number; token: Address; amount: bigint; payee: Address; nonce: bigint; deadline: bigint };

/**
 * The typed data of an x402 exact payment by Permit2, as `@x402/evm` signs it: a witness transfer of `amount` to x402's
 * proxy, whose witness names the payee; valid at once (validAfter 0), in decimal strings as requests carry them.
 */
export function x402Permit2TypedData(payment: Permit2Payment) {
  return {
    domain: { name: "Permit2", chainId: payment.chainId, verifyingContract: PERMIT2 },
    types: {
      PermitWitnessTransferFrom: fields(`permitted:TokenPermissions,${TRANSFER_FROM},witness:Witness`),
      TokenPermissions: fields(PERMISSIONS),
      Witness: fields(X402_WITNESS),
    },
    primaryType: "PermitWitnessTransferFrom" as const,
    message: {
      permitted: { token: payment.token, amount: String(payment.amount) },
      spender: X402_EXACT_PERMIT2_PROXY,
      nonce: String(payment.nonce),
      deadline: String(payment.deadline),
      witness: { to: payment.payee, validAfter: "0" },
    },
  };
}

/** Permit2's plain signature transfer (no witness), as its typed data declares it: a spender takes `permitted` once. */
export const PERMIT_TRANSFER_FROM_TYPES = {
  PermitTransferFrom: fields(`permitted:TokenPermissions,${TRANSFER_FROM}`),
  TokenPermissions: fields(PERMISSIONS),
};

const same = (address: unknown, expected: Address) => typeof address === "string" && address.toLowerCase() === expected.toLowerCase();

/** An x402 Permit2 payment's payee and start: a witness transfer on Permit2, spent by x402's exact proxy. */
function x402Payment(typedData: TypedDataDefinition, permit: Omit<Permit, "kind" | "chainId">): Pick<Permit, "payee" | "validAfter"> {
  const domain = (typedData.domain ?? {}) as Values;
  const witnessType = (typedData.types as Declared).PermitWitnessTransferFrom.at(-1)!;
  const declared = (typedData.types as Declared)[witnessType.type].map((field) => `${field.name}:${field.type}`).join(",");
  if (declared !== X402_WITNESS || domain.name !== "Permit2" || !same(domain.verifyingContract, PERMIT2)) return {};
  if (!same(permit.spender, X402_EXACT_PERMIT2_PROXY)) return {};
  const witness = (typedData.message as Values)[witnessType.name] as Values;
  return { payee: witness.to as Address, validAfter: integer(witness.validAfter) };
}

/**
 * Whom a permit pays outright, or null when it lets a spender take: a transfer authorization's recipient, an x402
 * Permit2 payment's payee (its proxy, the spender, pays no one else).
 */
export function payeeOf(permit: Permit): Address | null {
  if (permit.payee) return permit.payee;
  return permit.kind === "TransferWithAuthorization" || permit.kind === "ReceiveWithAuthorization" ? permit.spender : null;
}

/** The permit these typed data grant, or null when they are not one of the recognised permits. */
export function recognisePermit(typedData: TypedDataDefinition): Permit | null {
  const kind = (Object.keys(SHAPES) as PermitKind[]).find((candidate) => hasShape(typedData, SHAPES[candidate]));
  if (!kind) return null;
  const domain = (typedData.domain ?? {}) as Values;
  try {
    const granted = read(kind, typedData.message as Values, domain);
    return {
      kind,
      chainId: domain.chainId === undefined ? null : Number(domain.chainId),
      ...granted,
      ...(kind === "PermitWitnessTransferFrom" && x402Payment(typedData, granted)),
    };
  } catch {
    // Values that are not integers cannot be signed either; the page then shows the declared fields as they are.
    return null;
  }
}
