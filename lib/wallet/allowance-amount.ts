// The person may lower the amount of an allowance an agent asks for (an ERC-20 approve, Permit2's approve, an
// EIP-2612 permit, a Permit2 single permit) before signing it. The lowered payload is the asked one with that one
// amount replaced: the server rebuilds it from the stored payload and the amount, binds the passkey challenge to it,
// checks the signature over it and records it as what was signed. Pure and browser-safe.
import { encodeFunctionData, erc20Abi, parseAbi, type Address, type Hex, type TypedDataDefinition } from "viem";
import { decodeCall } from "./call-decoding";
import { recognisePermit } from "./permits";
import type { RequestPayload } from "./request-payload";

const permit2Abi = parseAbi(["function approve(address token, address spender, uint160 amount, uint48 expiration)"]);

/** The amount a person may lower, with the token it counts in and that token's chain; null when there is none. */
export type AllowanceAmount = { amount: bigint; token: Address; chainId: number };

/** An approve's calldata (ERC-20's or Permit2's) with its amount set to `amount`, lowercased. */
function calldataWith(data: Hex, amount: bigint): Hex {
  const call = decodeCall(data);
  if (call.kind === "approve") return encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [call.spender, amount] });
  if (call.kind !== "permit2Approve") return data.toLowerCase() as Hex;
  return encodeFunctionData({
    abi: permit2Abi,
    functionName: "approve",
    args: [call.token, call.spender, amount, Number(call.expiration)],
  });
}

export function allowanceAmount(payload: RequestPayload): AllowanceAmount | null {
  if (payload.kind === "sign_message" || payload.kind === "request_allowance") return null;
  if (payload.kind === "send_transaction") {
    const { transaction } = payload;
    const call = decodeCall(transaction.data);
    const found =
      call.kind === "approve"
        ? { amount: call.amount, token: transaction.to, chainId: transaction.chainId }
        : call.kind === "permit2Approve"
          ? { amount: call.amount, token: call.token, chainId: transaction.chainId }
          : null;
    // Calldata with bytes beyond the call's arguments is not rebuilt: the lowered call would differ in more than its amount.
    return found && calldataWith(transaction.data, found.amount) === transaction.data.toLowerCase() ? found : null;
  }
  const permit = recognisePermit(payload.typedData);
  if (!permit || (permit.kind !== "Permit" && permit.kind !== "PermitSingle") || permit.chainId === null) return null;
  const [{ token, amount }] = permit.amounts;
  return token ? { amount, token, chainId: permit.chainId } : null;
}

export class AllowanceAmountError extends Error {}

/** The payload with its allowance amount set to `amount`, which must be below the asked one; nothing else changes. */
export function withAllowanceAmount(payload: RequestPayload, amount: bigint): RequestPayload {
  const asked = allowanceAmount(payload);
  if (!asked) throw new AllowanceAmountError("This request has no allowance amount to lower");
  if (amount < 0n || amount >= asked.amount) throw new AllowanceAmountError("The amount can only be lowered, to 0 or more");
  if (payload.kind === "send_transaction") {
    return { kind: "send_transaction", transaction: { ...payload.transaction, data: calldataWith(payload.transaction.data, amount) } };
  }
  if (payload.kind !== "sign_typed_data") return payload;
  const message = payload.typedData.message as Record<string, unknown>;
  const lowered =
    payload.typedData.primaryType === "Permit"
      ? { ...message, value: amount.toString() }
      : { ...message, details: { ...(message.details as Record<string, unknown>), amount: amount.toString() } };
  return { kind: "sign_typed_data", typedData: { ...payload.typedData, message: lowered } as TypedDataDefinition };
}
