// The chain side of allowances: simulating a call (eth_call) so that nothing that would revert is sent, and sending
// as the chain's relayer, which pays the gas. One relayer's nonces are chosen under a lease, so instances sharing it
// never send two transactions with one nonce.
import { decodeErrorResult, keccak256, type Address, type Hex, type SignedAuthorizationList, type TransactionReceipt } from "viem";
import { DelegationManager } from "@metamask/delegation-abis";
import { AppError } from "@/lib/http/errors";
import { onChain } from "@/lib/wallet/chains";
import { withLease } from "./lease";
import { relayerAccount } from "./settings";

/** How long a sent transaction may take to be mined before the caller hears it is still pending. */
const RECEIPT_TIMEOUT_MS = 60_000;
/** viem's default is 4 s: a spend holds its allowance's lease until the receipt, so ask often. */
const RECEIPT_POLL_MS = 250;

class NoRelayerError extends AppError {
  constructor(chainId: number) {
    super(
      "allowance_unavailable",
      `No relayer is configured for chain ${chainId} (ALLOWANCE_RELAYERS), so allowances cannot be used there.`,
      409,
    );
  }
}

export function relayerOn(chainId: number) {
  const relayer = relayerAccount(chainId);
  if (!relayer) throw new NoRelayerError(chainId);
  return relayer;
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
  for (const abi of [ERROR_STRING, DelegationManager]) {
    try {
      const decoded = decodeErrorResult({ abi, data });
      return decoded.errorName === "Error" ? String(decoded.args?.[0]) : decoded.errorName;
    } catch {
      // not this ABI's error
    }
  }
  return `the call reverted (${data.slice(0, 10)})`;
}

/** Runs the call as `from` would send it; null when it succeeds, else why it reverts. */
export async function simulate(chainId: number, call: { from: Address; to: Address; data: Hex }): Promise<string | null> {
  return onChain(chainId, async (client) => {
    try {
      await client.request({ method: "eth_call", params: [{ from: call.from, to: call.to, data: call.data }, "latest"] });
      return null;
    } catch (error) {
      const data = revertData(error);
      if (data === null && !/revert|execution/i.test(String((error as Error).message))) throw error;
      return revertReason(data);
    }
  });
}

export type Relayed = { hash: Hex; receipt: () => Promise<TransactionReceipt> };

/**
 * Signs and sends `call` as the relayer. `onSigned` runs with the hash before the transaction leaves, so that the
 * caller has recorded it even if this process stops right after sending.
 */
export async function relay(
  chainId: number,
  call: { to: Address; data: Hex; gas?: bigint; authorizationList?: SignedAuthorizationList },
  onSigned: (hash: Hex) => Promise<void>,
): Promise<Relayed> {
  const relayer = relayerOn(chainId);
  const hash = await withLease(
    `relayer:${chainId}:${relayer.address}`,
    () =>
      onChain(chainId, async (client) => {
        const [nonce, fees, gas] = await Promise.all([
          client.getTransactionCount({ address: relayer.address, blockTag: "pending" }),
          client.estimateFeesPerGas(),
          call.gas ??
            client.estimateGas({ account: relayer.address, to: call.to, data: call.data, authorizationList: call.authorizationList }),
        ]);
        const common = {
          chainId,
          nonce,
          to: call.to,
          data: call.data,
          gas,
          maxFeePerGas: fees.maxFeePerGas,
          maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
        };
        const signed = call.authorizationList
          ? await relayer.signTransaction({ ...common, type: "eip7702", authorizationList: call.authorizationList })
          : await relayer.signTransaction({ ...common, type: "eip1559" });
        const hash = keccak256(signed);
        await onSigned(hash);
        await client.request({ method: "eth_sendRawTransaction", params: [signed] });
        return hash;
      }),
    { holdMs: 30_000 },
  );
  return {
    hash,
    receipt: () =>
      onChain(chainId, (client) =>
        client.waitForTransactionReceipt({ hash, timeout: RECEIPT_TIMEOUT_MS, pollingInterval: RECEIPT_POLL_MS }),
      ),
  };
}
