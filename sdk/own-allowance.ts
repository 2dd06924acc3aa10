// Spending an allowance whose key the agent holds (request_allowance) with that key and its own gas: the transaction
// to the DelegationManager that redeems a granted permission's delegation for one call. Nothing here talks to Agent
// Wallet: the chain checks the delegation's caveats (its cap per period, payees, payments and end) when it is mined.
import { concat, encodeFunctionData, getAddress, pad, toHex, type Address, type Hex } from "viem";
import type { GrantedPermission } from "../contract";

/** ERC-7579's single call with the default execution type: what each delegation of an allowance allows. */
const SINGLE_DEFAULT_MODE = `0x${"00".repeat(32)}` as Hex;

const REDEEM_DELEGATIONS = [
  {
    type: "function",
    name: "redeemDelegations",
    stateMutability: "nonpayable",
    inputs: [
      { name: "_permissionContexts", type: "bytes[]" },
      { name: "_modes", type: "bytes32[]" },
      { name: "_executionCallDatas", type: "bytes[]" },
    ],
    outputs: [],
  },
] as const;

/** One call the allowance's account makes: the coin to a payee (`data` empty), or a token's transfer call. */
export type AllowanceCall = { target: Address; value?: bigint; data?: Hex };

/**
 * The transaction (to the DelegationManager) that has the person's account make `call` under `granted`, one of a
 * permission's delegations: sign and send it from the allowance's key (`permission.to`) with any viem wallet client.
 * The chain refuses it from any other sender, and above what the delegation still allows.
 */
export function ownRedemption(
  permission: Pick<GrantedPermission, "delegation_manager">,
  granted: Pick<GrantedPermission["granted"][number], "context">,
  call: AllowanceCall,
): { to: Address; data: Hex; value: 0n } {
  const execution = concat([getAddress(call.target), pad(toHex(call.value ?? 0n), { size: 32 }), call.data ?? "0x"]);
  const data = encodeFunctionData({
    abi: REDEEM_DELEGATIONS,
    functionName: "redeemDelegations",
    args: [[granted.context as Hex], [SINGLE_DEFAULT_MODE], [execution]],
  });
  return { to: getAddress(permission.delegation_manager), data, value: 0n };
}
