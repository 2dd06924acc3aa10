// Calls into the DeleGator and its typed data, built as a wallet, an agent or this project's own code builds them, for
// the unit tests of what reads them (decoding, the policy's counting, the risks).
import { DelegationManager, EIP7702StatelessDeleGator, EntryPoint } from "@metamask/delegation-abis";
import { ROOT_AUTHORITY } from "@metamask/delegation-core";
import { encodeAbiParameters, encodeFunctionData, encodePacked, type Address, type Hex, type TypedDataDefinition } from "viem";
import { toPackedUserOperation } from "viem/account-abstraction";
import { delegationTypedData as managerTypedData } from "./caveats";
import type { Framework } from "@/lib/wallet/delegation-framework";
import { operationTypedData } from "./revocation-operation";
import { DELEGATION_ARRAY, EXECUTION_ARRAY, type Execution } from "@/lib/wallet/deleGator-calls";
import type { RequestPayload } from "@/lib/wallet/request-payload";

/** ERC-7579 modes: a call type, an exec type, then zeros. */
const SINGLE = `0x00${"00".repeat(31)}` as Hex;
const BATCH = `0x01${"00".repeat(31)}` as Hex;
export const mode = (callType: string, execType = "00") => `0x${callType}${execType}${"00".repeat(30)}` as Hex;

/** `execute(mode, executionCalldata)` of these executions: packed in a single call type, else as an ABI-encoded batch. */
export function execute(executions: Execution[], as: Hex = executions.length === 1 ? SINGLE : BATCH): Hex {
  const [first] = executions;
  const calldata = as.startsWith("0x00")
    ? encodePacked(["address", "uint256", "bytes"], [first.target, first.value, first.callData])
    : encodeAbiParameters(EXECUTION_ARRAY, [executions]);
  return encodeFunctionData({ abi: EIP7702StatelessDeleGator, functionName: "execute", args: [as, calldata] });
}

/** `redeemDelegations` of one batch: the delegations (leaf to root; none: the caller's own account) and its executions. */
export function redeem(delegations: { delegate: Address; delegator: Address }[], executions: Execution[]): Hex {
  const signed = delegations.map((entry) => ({ ...entry, authority: ROOT_AUTHORITY, caveats: [], salt: 1n, signature: "0x" }));
  const context = encodeAbiParameters(DELEGATION_ARRAY, [signed]);
  const batch = encodeAbiParameters(EXECUTION_ARRAY, [executions]);
  return encodeFunctionData({ abi: DelegationManager, functionName: "redeemDelegations", args: [[context], [BATCH], [batch]] });
}

/** A Delegation's typed data on chain 31337, as an agent would send it (JSON values: the salt a decimal string). */
export function delegationTypedData(
  framework: Pick<Framework, "DelegationManager">,
  delegation: { delegate: Address; delegator: Address; caveats: { enforcer: Address; terms: Hex }[]; authority?: Hex },
): TypedDataDefinition {
  const signed = { authority: ROOT_AUTHORITY as Hex, salt: 7n, signature: "0x" as Hex, ...delegation };
  const typedData = managerTypedData(framework as Framework, 31337, {
    ...signed,
    caveats: signed.caveats.map((caveat) => ({ ...caveat, args: "0x" })),
  });
  return { ...typedData, message: { ...typedData.message, salt: "7" } } as unknown as TypedDataDefinition;
}

/** A transaction as the wallet prepares it: `data` to `to` on chain 31337, sending nothing. */
export function preparedTransaction(to: Address, data: Hex = "0x"): RequestPayload {
  return {
    kind: "send_transaction",
    transaction: {
      type: "eip1559",
      chainId: 31337,
      to,
      value: "0",
      data,
      nonce: null,
      gas: "60000",
      maxFeePerGas: "1",
      maxPriorityFeePerGas: "1",
    },
  };
}

/** The fixtures' user operations' gas: at most 290,000 gas at 1 gwei. */
const OPERATION_GAS = {
  callGasLimit: 80_000n,
  verificationGasLimit: 150_000n,
  preVerificationGas: 60_000n,
  maxFeePerGas: 1_000_000_000n,
  maxPriorityFeePerGas: 1_000_000_000n,
};

/** A user operation of `sender` running `callData`, as this project signs its revocations (gas: 290,000 at 1 gwei). */
export function userOperationTypedData(
  framework: Pick<Framework, "EntryPoint">,
  sender: Address,
  callData: Hex,
  paymasterAndData: Hex = "0x",
) {
  const typedData = operationTypedData(framework as Framework, 31337, { sender, nonce: 0n, callData, ...OPERATION_GAS, signature: "0x" });
  // As an agent sends it: the declared fields only, integers as decimal strings.
  const { signature: _unsigned, ...fields } = typedData.message as typeof typedData.message & { signature?: Hex };
  const message = { ...fields, nonce: "0", preVerificationGas: "60000", paymasterAndData };
  return { ...typedData, message } as unknown as TypedDataDefinition;
}

/** EntryPoint v0.7's `handleOps` of one signed user operation of `sender` running `callData`, its gas refund to `beneficiary`. */
export function handleOpsCall(sender: Address, callData: Hex, beneficiary: Address): Hex {
  const operation = toPackedUserOperation({ sender, nonce: 0n, callData, ...OPERATION_GAS, signature: `0x${"11".repeat(65)}` });
  return encodeFunctionData({ abi: EntryPoint, functionName: "handleOps", args: [[operation], beneficiary] });
}
