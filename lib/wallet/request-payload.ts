// What an agent request asks to have signed. Pure and browser-safe: the server
// stores and digests the payload with these functions, and the approval page's
// browser code signs exactly what they describe.
import {
  hashTypedData,
  keccak256,
  serializeTransaction,
  toHex,
  toPrefixedMessage,
  type Hex,
  type TransactionSerializable,
  type TypedDataDefinition,
} from "viem";
import { escapedText } from "@/lib/text/visible-text";

/**
 * What the person's browser signs for a send_transaction, exactly (amounts as decimal strings). The nonce is null
 * until the person approves: it is fixed when their passkey challenge is issued (lib/wallet/nonces.ts).
 */
export type PreparedTransaction = {
  type: "eip1559";
  chainId: number;
  to: `0x${string}`;
  value: string;
  data: `0x${string}`;
  nonce: number | null;
  gas: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
};

/**
 * The x402 payment a request's typed data authorizes (pay_x402 outside an allowance, lib/x402/one-tap.ts): what it
 * pays for, as the resource described itself, and the payment to send back, complete but for its signature. Not part
 * of what is signed: the amount, payee and token shown come from the typed data itself.
 */
export type X402Context = {
  resource: { url: string; description: string | null };
  header: "PAYMENT-SIGNATURE" | "X-PAYMENT";
  /** the x402 PaymentPayload (V2) or V1 payment, whose `payload` lacks only its `signature` */
  unsigned: { payload: Record<string, unknown> } & Record<string, unknown>;
};

/** A value as x402 sends it in a header: its JSON, base64 (Buffer's, several times faster than a btoa of ~10 KB). */
export function base64Json(value: unknown): string {
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64");
}

/** The payment value to send back once the person's signature of the authorization is there. */
export function x402PaymentValue(context: X402Context, signature: string): { header: X402Context["header"]; value: string } {
  return { header: context.header, value: base64Json({ ...context.unsigned, payload: { ...context.unsigned.payload, signature } }) };
}

/**
 * An allowance an agent asks for an address whose key it holds (request_allowance), in the person's units, each token
 * with its symbol and decimals as read when it asked. What the person signs is built from it when they open it and
 * decoded in their browser (lib/allowances/asked.ts); its digest stands for what was asked.
 */
export type AskedAllowance = {
  /** the address whose key the agent holds: the allowance's only delegate */
  agent: `0x${string}`;
  chainId: number;
  /** per period, of the chain's coin, in whole units; absent: none of it */
  coin?: string;
  /** `amount` per period and `perPayment` (any payee), in whole tokens */
  tokens: { address: `0x${string}`; amount: string; perPayment?: string; symbol: string; decimals: number }[];
  /** empty with `anyPayee` */
  recipients: `0x${string}`[];
  anyPayee: boolean;
  period: "hour" | "day" | "week";
  /** unix seconds */
  expiresAt: number;
  transactions: number;
  /** the agent's words for why it asks: its claim, shown as such */
  justification: string;
};

export type RequestPayload =
  | { kind: "sign_message"; message: string }
  | { kind: "sign_typed_data"; typedData: TypedDataDefinition; x402?: X402Context }
  | { kind: "send_transaction"; transaction: PreparedTransaction }
  | { kind: "request_allowance"; allowance: AskedAllowance };

/** The stored payload of a request row. */
export function payloadOf(row: { payload: string }): RequestPayload {
  return JSON.parse(row.payload) as RequestPayload;
}

/** The prepared transaction as viem signs and serializes it; only once its nonce is fixed. */
export function transactionForSigning(transaction: PreparedTransaction) {
  if (transaction.nonce === null) throw new Error("The transaction's nonce is fixed when the person approves it");
  return {
    type: "eip1559" as const,
    chainId: transaction.chainId,
    to: transaction.to,
    value: BigInt(transaction.value),
    data: transaction.data,
    nonce: transaction.nonce,
    gas: BigInt(transaction.gas),
    maxFeePerGas: BigInt(transaction.maxFeePerGas),
    maxPriorityFeePerGas: BigInt(transaction.maxPriorityFeePerGas),
  };
}

const NUMERIC_FIELDS = ["chainId", "nonce", "value", "gas", "maxFeePerGas", "maxPriorityFeePerGas"] as const;

/**
 * The first field in which a signed transaction (as viem parses it) differs
 * from the prepared one, or null when it is exactly that transaction. Numbers
 * compare as integers with an absent field meaning 0, because RLP encodes a zero
 * as empty and the parser then leaves the field out (a 0-value contract call).
 */
export function transactionMismatch(signed: TransactionSerializable, prepared: PreparedTransaction): string | null {
  const expected = transactionForSigning(prepared);
  if (signed.type !== "eip1559") return "type";
  for (const field of NUMERIC_FIELDS) {
    if (BigInt(signed[field] ?? 0) !== BigInt(expected[field])) return field;
  }
  if ((signed.to ?? "").toLowerCase() !== expected.to.toLowerCase()) return "to";
  if ((signed.data ?? "0x").toLowerCase() !== expected.data.toLowerCase()) return "data";
  if (signed.accessList?.length) return "accessList";
  return null;
}

/**
 * The digest the approval's passkey challenge binds to: for a message or typed data, the hash its signature signs. A
 * transaction whose nonce is not fixed yet has none to approve: its digest stands for what was asked (the unsigned
 * fields) until the nonce is fixed. `keccak` is viem's unless the caller has a faster one of the same hash (the
 * server's native build, lib/wallet/keccak.ts); typed data is hashed by viem whatever it is.
 */
export function payloadDigest(payload: RequestPayload, keccak: (data: Hex) => Hex = keccak256): Hex {
  if (payload.kind === "sign_message") return keccak(toPrefixedMessage(payload.message));
  if (payload.kind === "sign_typed_data") return hashTypedData(payload.typedData);
  if (payload.kind === "request_allowance") return keccak(toHex(JSON.stringify(payload.allowance)));
  if (payload.transaction.nonce === null) return keccak(toHex(JSON.stringify(payload.transaction)));
  return keccak(serializeTransaction(transactionForSigning(payload.transaction)));
}

const EXCERPT_LENGTH = 80;

/** A message's start for lists and notifications, its hidden characters shown escaped as on its page. */
export function messageExcerpt(message: string): string {
  const shown = escapedText(message);
  return shown.length > EXCERPT_LENGTH ? `${shown.slice(0, EXCERPT_LENGTH)}…` : shown;
}
