// A call the chain would refuse, in words: the revert data an RPC error carries (wherever viem put it), decoded as an
// `Error(string)`, or as one of the Delegation Framework's and the EntryPoint's named errors. And a transaction the
// node refused, in the node's own words, which viem's message ("Missing or invalid parameters") hides.
import { decodeErrorResult, RpcRequestError, type Hex } from "viem";
import { DelegationManager, EntryPoint } from "@metamask/delegation-abis";
import { AppError } from "@/lib/http/errors";
import { chainById, ChainError } from "./chains";

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
  const message = String((error as Error).message);
  if (data === null && /out of gas/i.test(message)) return new WouldRevertError("it runs out of gas");
  if (data === null && !/revert|execution/i.test(message)) return error;
  return new WouldRevertError(revertReason(data));
}

/** The parts of an RPC URL long enough to be a key (an API key in its path or query, its credentials, its host). */
function urlParts(rpcUrl: string): string[] {
  const url = new URL(rpcUrl);
  const parts = [url.host, url.username, url.password, ...url.pathname.split("/"), ...url.searchParams.values()];
  return parts.filter((part) => part.length >= 6);
}

/**
 * The node's own message in an RPC error ("replacement transaction underpriced"): its first line, with no web address
 * and nothing of the RPC URL (which may carry a key). Null when the node did not answer with an error of its own (a
 * silence, a rate limit).
 */
export function nodeWords(error: unknown): string | null {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (!(cause instanceof RpcRequestError)) continue;
    let words = cause.details.split("\n")[0].replace(/[a-z][a-z0-9+.-]*:\/\/[^\s,;)"'<>]*/gi, "…");
    for (const part of urlParts(cause.url)) words = words.replaceAll(part, "…");
    return words.trim().slice(0, 200) || null;
  }
  return null;
}

/** A broadcast refused because the node already holds the transaction ("already known", "Known transaction"): it was sent. */
export function alreadyKnown(error: unknown): boolean {
  return /already[ _]?known|known transaction|already[ _]exists|already imported/i.test(nodeWords(error) ?? "");
}

/** The node refused a transaction it was sent, in its own words: it did not take it, so nothing was paid. */
export class SendRefusedError extends ChainError {
  constructor(
    chainId: number,
    readonly words: string,
  ) {
    super(`The ${chainById(chainId).name} node refused the transaction (${words}); nothing was paid.`);
  }
}
