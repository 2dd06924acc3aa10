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

/** The UserOperation that disables every delegation of the allowances, for the account's EntryPoint nonce `nonce`. */
function revocationOperation(framework: Framework, allowances: Revocable[], nonce: bigint): UserOperation<"0.7"> {
  const calls = allowances
    .flatMap((allowance) => allowance.delegations)
    .map((row) => ({
      target: framework.DelegationManager,
      value: 0n,
      callData: encodeFunctionData({
        abi: DelegationManager,
        functionName: "disableDelegation",
        args: [parseStoredDelegation(row.signed)],
      }),
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
    sender: getAddress(allowances[0].delegator),
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

/** The allowances, which one signature revokes only if they share one account on one chain. */
async function revocable(allowanceIds: string[]) {
  const allowances = await Promise.all([...new Set(allowanceIds)].sort().map(findAllowance));
  const [first] = allowances;
  if (!first) throw new AllowanceError("Name the allowances to revoke.");
  if (allowances.some((allowance) => allowance.chainId !== first.chainId || allowance.delegator !== first.delegator)) {
    throw new AllowanceError("One revocation covers the allowances of one wallet on one chain.");
  }
  return { allowances, chainId: first.chainId, framework: frameworkFor(first.chainId) };
}

/** Runs `work` holding every allowance's lease, taken in id order so that two revocations cannot wait on each other. */
function holdingAll<T>(ids: string[], work: () => Promise<T>): Promise<T> {
  const [id, ...rest] = ids;
  return id ? withLease(`allowance:${id}`, () => holdingAll(rest, work)) : work();
}

/** The revocation to sign now (one passkey approval for all the allowances): its EntryPoint nonce and the typed data. */
export async function prepareRevocation(allowanceIds: string[]) {
  const { allowances, chainId, framework } = await revocable(allowanceIds);
  const delegator = getAddress(allowances[0].delegator);
  const nonce = await onChain(chainId, (client) =>
    client.readContract({ address: framework.EntryPoint, abi: EntryPoint, functionName: "getNonce", args: [delegator, 0n] }),
  );
  return { nonce: nonce.toString(), typedData: operationTypedData(framework, chainId, revocationOperation(framework, allowances, nonce)) };
}

/**
 * Revokes the allowances with the person's signature over the prepared revocation. Spends are refused from the first
 * line on; they are `revoked` once the chain shows every delegation disabled. If the chain does not confirm, they stay
 * `revoking` (still refusing spends) and the person may sign again.
 */
export async function revokeAllowances(allowanceIds: string[], signed: { nonce: string; signature: Hex }): Promise<{ txHash: Hex }> {
  const { allowances: asked, chainId, framework } = await revocable(allowanceIds);
  if (asked.some((allowance) => allowance.status === "revoked")) throw new AllowanceError("An allowance named is already revoked.", 409);
  const ids = asked.map((allowance) => allowance.id);
  await db().allowance.updateMany({ where: { id: { in: ids } }, data: { status: "revoking" } });
  const relayer = relayerOn(chainId).address;
  // Waits for spends in flight, so that what they sent is settled before the revocation goes out.
  return holdingAll(ids, async () => {
    const { allowances } = await revocable(ids);
    const operation = { ...revocationOperation(framework, allowances, BigInt(signed.nonce)), signature: signed.signature };
    const data = encodeFunctionData({ abi: EntryPoint, functionName: "handleOps", args: [[toPackedUserOperation(operation)], relayer] });
    const reverts = await simulate(chainId, { from: relayer, to: framework.EntryPoint, data });
    if (reverts) throw new AllowanceError(`The chain would refuse this revocation (${reverts}); sign it again.`, 409);
    const sent = await relay(chainId, { to: framework.EntryPoint, data }, async () => {});
    const receipt = await sent.receipt();
    const disabled = await onChain(chainId, (client) =>
      Promise.all(
        allowances
          .flatMap((allowance) => allowance.delegations)
          .map((row) =>
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
        `The revocation's transaction ${sent.hash} did not disable the allowances; they stay stopped here, sign again.`,
        502,
      );
    }
    await db().allowance.updateMany({
      where: { id: { in: ids } },
      data: { status: "revoked", revokedAt: new Date(), revocationTx: sent.hash },
    });
    for (const allowance of allowances) {
      await recordAudit({
        type: "allowance.revoked",
        userId: allowance.userId,
        credentialId: allowance.credentialId,
        data: { allowanceId: allowance.id, txHash: sent.hash },
      });
    }
    return { txHash: sent.hash };
  });
}
