// A call the chain would refuse, in words: the revert data an RPC error carries (wherever viem put it), decoded as an
// `Error(string)`, or as one of the Delegation Framework's and the EntryPoint's named errors.
import { decodeErrorResult, type Hex } from "viem";
import { DelegationManager, EntryPoint } from "@metamask/delegation-abis";
import { AppError } from "@/lib/http/errors";

/** The chain would revert the transaction as it would be sent: nothing was sent. */
export class WouldRevertError extends AppError {
  constructor(readonly why: string) {
    super("would_revert", `The chain would refuse this transaction (${why}); nothing was sent.`, 409);
  }
}

/** The revert data an RPC error carries, wherever viem put it. */
function revertData(error: unknown): Hex | null {
  for (let cause = error as { data?: unknown; cause?: unknown } | undefined; cause; cause = cause.cause as typeof cause) {
    const data = typeof cause.data === "object" && cause.data ? (cause.data as { data?: unknown }).data : cause.data;
    if (typeof data === "string" && /^0x[0-9a-fA-F]*$/.test(data)) return data as Hex;
  }
  return null;
}

const ERROR_STRING = [{ type: "error", name: "Error", inputs: [{ name: "reason", type: "string" }] }] as const;

/** A revert in words: the enforcer's reason ("NativeTokenPeriodTransferEnforcer:transfer-amount-exceeded") or the error's name. */
function revertReason(data: Hex | null): string {
  if (!data || data === "0x") return "the call reverted without a reason";
  for (const abi of [ERROR_STRING, DelegationManager, EntryPoint]) {
    try {
      const decoded = decodeErrorResult({ abi, data });
      if (decoded.errorName === "Error") return String(decoded.args?.[0]);
      // the EntryPoint's FailedOp(opIndex, reason): its reason ("AA24 signature error") says it
      const reason = decoded.args?.find((arg): arg is string => typeof arg === "string");
      return reason ? `${decoded.errorName}: ${reason}` : decoded.errorName;
    } catch {
      // not this ABI's error
    }
  }
  return `the call reverted (${data.slice(0, 10)})`;
}

/**
 * `error` as the WouldRevertError it is when the node refused the call by reverting it (revert data, or a message
 * that says so); any other failure (the node erring, not answering) is returned as it was.
 */
export function asRevert(error: unknown): unknown {
  const data = revertData(error);
  if (data === null && !/revert|execution/i.test(String((error as Error).message))) return error;
  return new WouldRevertError(revertReason(data));
}
