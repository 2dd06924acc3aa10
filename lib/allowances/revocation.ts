// Revoking an allowance with an empty wallet: the person signs an ERC-4337 UserOperation from their own (EIP-7702)
// account that calls DelegationManager.disableDelegation for each of the allowance's delegations; the relayer sends
// it straight to EntryPoint v0.7's handleOps and pays the gas. Its gas prices are 0, so the account owes the
// EntryPoint nothing and needs no coin. Spends are refused from the moment the revocation is asked for.
import { encodeAbiParameters, encodeFunctionData, getAddress, type Hex } from "viem";
import { toPackedUserOperation, type UserOperation } from "viem/account-abstraction";
import { DelegationManager, EIP7702StatelessDeleGator, EntryPoint } from "@metamask/delegation-abis";
import { recordAudit } from "@/lib/audit";
import { db } from "@/lib/db";
import { onChain } from "@/lib/wallet/chains";
import { AllowanceError, findAllowance, frameworkFor, parseStoredDelegation } from "./allowances";
import type { Framework } from "./framework";
import { withLease } from "./lease";
import { relay, relayerOn, simulate } from "./relay";

/** ERC-7579 ModeCode for a batch of calls, reverting on failure. */
const BATCH_DEFAULT_MODE = `0x01${"00".repeat(31)}` as Hex;

const USER_OPERATION_TYPES = {
  PackedUserOperation: [
    { name: "sender", type: "address" },
    { name: "nonce", type: "uint256" },
    { name: "initCode", type: "bytes" },
    { name: "callData", type: "bytes" },
    { name: "accountGasLimits", type: "bytes32" },
    { name: "preVerificationGas", type: "uint256" },
    { name: "gasFees", type: "bytes32" },
    { name: "paymasterAndData", type: "bytes" },
    { name: "entryPoint", type: "address" },
  ],
} as const;

type Revocable = { chainId: number; delegator: string; delegations: { signed: string }[] };

/** The UserOperation that disables every delegation of the allowance, for the account's EntryPoint nonce `nonce`. */
function revocationOperation(framework: Framework, allowance: Revocable, nonce: bigint): UserOperation<"0.7"> {
  const calls = allowance.delegations.map((row) => ({
    target: framework.DelegationManager,
    value: 0n,
    callData: encodeFunctionData({ abi: DelegationManager, functionName: "disableDelegation", args: [parseStoredDelegation(row.signed)] }),
  }));
  const batch = encodeAbiParameters(
    [
      {
        type: "tuple[]",
        components: [
          { name: "target", type: "address" },
          { name: "value", type: "uint256" },
          { name: "callData", type: "bytes" },
        ],
      },
    ],
    [calls],
  );
  return {
    sender: getAddress(allowance.delegator),
    nonce,
    callData: encodeFunctionData({ abi: EIP7702StatelessDeleGator, functionName: "execute", args: [BATCH_DEFAULT_MODE, batch] }),
    callGasLimit: 80_000n + 40_000n * BigInt(calls.length),
    verificationGasLimit: 150_000n,
    preVerificationGas: 60_000n,
    maxFeePerGas: 0n,
    maxPriorityFeePerGas: 0n,
    signature: "0x",
  };
}

/** What the person signs to revoke (EIP-712, verified by their DeleGator account). */
function operationTypedData(framework: Framework, chainId: number, operation: UserOperation<"0.7">) {
  return {
    domain: { name: "EIP7702StatelessDeleGator", version: "1", chainId, verifyingContract: operation.sender },
    types: USER_OPERATION_TYPES,
    primaryType: "PackedUserOperation" as const,
    message: { ...toPackedUserOperation({ ...operation, signature: "0x" }), entryPoint: framework.EntryPoint },
  };
}

/** The revocation to sign now: its EntryPoint nonce and the typed data. */
export async function prepareRevocation(allowanceId: string) {
  const allowance = await findAllowance(allowanceId);
  const framework = frameworkFor(allowance.chainId);
  const nonce = await onChain(allowance.chainId, (client) =>
    client.readContract({
      address: framework.EntryPoint,
      abi: EntryPoint,
      functionName: "getNonce",
      args: [getAddress(allowance.delegator), 0n],
    }),
  );
  return {
    nonce: nonce.toString(),
    typedData: operationTypedData(framework, allowance.chainId, revocationOperation(framework, allowance, nonce)),
  };
}

/**
 * Revokes the allowance with the person's signature over the prepared revocation. Spends are refused from the first
 * line on; the allowance is `revoked` once the chain shows every delegation disabled. If the chain does not confirm,
 * it stays `revoking` (still refusing spends) and the person may sign again.
 */
export async function revokeAllowance(allowanceId: string, signed: { nonce: string; signature: Hex }): Promise<{ txHash: Hex }> {
  const first = await findAllowance(allowanceId);
  if (first.status === "revoked") throw new AllowanceError("This allowance is already revoked.", 409);
  await db().allowance.update({ where: { id: allowanceId }, data: { status: "revoking" } });
  const framework = frameworkFor(first.chainId);
  const relayer = relayerOn(first.chainId).address;
  // Waits for a spend in flight, so that what it sent is settled before the revocation goes out.
  return withLease(`allowance:${allowanceId}`, async () => {
    const allowance = await findAllowance(allowanceId);
    const operation = { ...revocationOperation(framework, allowance, BigInt(signed.nonce)), signature: signed.signature };
    const data = encodeFunctionData({ abi: EntryPoint, functionName: "handleOps", args: [[toPackedUserOperation(operation)], relayer] });
    const reverts = await simulate(allowance.chainId, { from: relayer, to: framework.EntryPoint, data });
    if (reverts) throw new AllowanceError(`The chain would refuse this revocation (${reverts}); sign it again.`, 409);
    const sent = await relay(allowance.chainId, { to: framework.EntryPoint, data }, async () => {});
    const receipt = await sent.receipt();
    const disabled = await onChain(allowance.chainId, (client) =>
      Promise.all(
        allowance.delegations.map((row) =>
          client.readContract({
            address: framework.DelegationManager,
            abi: DelegationManager,
            functionName: "disabledDelegations",
            args: [row.hash as Hex],
          }),
        ),
      ),
    );
    // handleOps succeeds even when the operation's own call reverted: the delegations' state is the answer.
    if (receipt.status !== "success" || !disabled.every(Boolean)) {
      throw new AllowanceError(
        `The revocation's transaction ${sent.hash} did not disable the allowance; it stays stopped here, sign again.`,
        502,
      );
    }
    await db().allowance.update({
      where: { id: allowanceId },
      data: { status: "revoked", revokedAt: new Date(), revocationTx: sent.hash },
    });
    await recordAudit({
      type: "allowance.revoked",
      userId: allowance.userId,
      credentialId: allowance.credentialId,
      data: { allowanceId, txHash: sent.hash },
    });
    return { txHash: sent.hash };
  });
}
