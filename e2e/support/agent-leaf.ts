// The agent's own key signing the one-time delegation prepare_allowance_payment answers, as the SDK's payFromAllowance
// does: for the suites that send it with send_allowance_payment themselves (agent-relay-suite.ts, the fault suites).
import { getAddress, type Address, type Hex, type TypedDataDefinition } from "viem";
import { delegationTypedData } from "@/contract/delegation";
import type { ToolOutput } from "@/contract";

export type Leaf = ToolOutput<"prepare_allowance_payment">["delegation"];

/** `leaf` signed by `signer` for the DelegationManager `manager` on chain `chainId`. */
export async function signedLeaf(
  leaf: Leaf,
  signer: { signTypedData: (data: TypedDataDefinition) => Promise<Hex> },
  manager: Address,
  chainId: number,
): Promise<Leaf> {
  const fields = { ...leaf, salt: BigInt(leaf.salt) } as Parameters<typeof delegationTypedData>[2];
  return {
    ...leaf,
    signature: await signer.signTypedData(delegationTypedData(getAddress(manager), chainId, fields) as TypedDataDefinition),
  };
}
