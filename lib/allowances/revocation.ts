// Revoking an allowance with an empty wallet: the person signs an ERC-4337 UserOperation from their own (EIP-7702)
// account that calls DelegationManager.disableDelegation for each of the allowance's delegations; the relayer sends
// it straight to EntryPoint v0.7's handleOps and pays the gas. Its gas prices are 0, so the account owes the
// EntryPoint nothing and needs no coin. Spends are refused from the moment the revocation is asked for.
import { encodeFunctionData, getAddress, type Hex } from "viem";
import { toPackedUserOperation } from "viem/account-abstraction";
import { DelegationManager, EntryPoint } from "@metamask/delegation-abis";
import { recordAudit } from "@/lib/audit";
import { db } from "@/lib/db";
import { NotFoundError } from "@/lib/http/errors";
import { onChain } from "@/lib/wallet/chains";
import { AllowanceError, findAllowance, frameworkFor, parseStoredDelegation } from "./allowances";
import { delegationToJson } from "./caveats";
import { revocationOperation, type RevocationToSign } from "./revocation-operation";
import { withLease } from "./lease";
import { relay, relayerOn, simulate } from "./relay";

/**
 * The person's allowances, which one signature revokes only if they share one account on one chain; with their
 * delegations in one order (by hash) that the browser signs and the server rebuilds.
 */
async function revocable(userId: string, allowanceIds: string[]) {
  const allowances = await Promise.all([...new Set(allowanceIds)].sort().map(findAllowance));
  const [first] = allowances;
  if (!first) throw new AllowanceError("Name the allowances to revoke.");
  if (allowances.some((allowance) => allowance.userId !== userId)) throw new NotFoundError("The allowance");
  if (allowances.some((allowance) => allowance.chainId !== first.chainId || allowance.delegator !== first.delegator)) {
    throw new AllowanceError("One revocation covers the allowances of one wallet on one chain.");
  }
  const rows = allowances.flatMap((allowance) => allowance.delegations).sort((a, b) => (a.hash < b.hash ? -1 : 1));
  return {
    allowances,
    rows,
    delegator: getAddress(first.delegator),
    chainId: first.chainId,
    framework: frameworkFor(first.chainId),
  };
}

/** Runs `work` holding every allowance's lease, taken in id order so that two revocations cannot wait on each other. */
function holdingAll<T>(ids: string[], work: () => Promise<T>): Promise<T> {
  const [id, ...rest] = ids;
  return id ? withLease(`allowance:${id}`, () => holdingAll(rest, work)) : work();
}

/** The revocation to sign now (one passkey approval for all the allowances): what the browser builds and signs. */
export async function prepareRevocation(userId: string, allowanceIds: string[]): Promise<RevocationToSign> {
  const { rows, delegator, chainId, framework } = await revocable(userId, allowanceIds);
  const nonce = await onChain(chainId, (client) =>
    client.readContract({ address: framework.EntryPoint, abi: EntryPoint, functionName: "getNonce", args: [delegator, 0n] }),
  );
  return {
    framework,
    chainId,
    delegator,
    nonce: nonce.toString(),
    delegations: rows.map((row) => delegationToJson(parseStoredDelegation(row.signed))),
  };
}

/**
 * Revokes the allowances with the person's signature over the prepared revocation. Spends are refused from the first
 * line on; they are `revoked` once the chain shows every delegation disabled. If the chain does not confirm, they stay
 * `revoking` (still refusing spends) and the person may sign again.
 */
export async function revokeAllowances(
  userId: string,
  allowanceIds: string[],
  signed: { nonce: string; signature: Hex },
): Promise<{ txHash: Hex }> {
  const { allowances: asked, chainId, framework } = await revocable(userId, allowanceIds);
  if (asked.some((allowance) => allowance.status === "revoked")) throw new AllowanceError("An allowance named is already revoked.", 409);
  const ids = asked.map((allowance) => allowance.id);
  await db().allowance.updateMany({ where: { id: { in: ids } }, data: { status: "revoking" } });
  const relayer = relayerOn(chainId).address;
  // Waits for spends in flight, so that what they sent is settled before the revocation goes out.
  return holdingAll(ids, async () => {
    const { allowances, rows, delegator } = await revocable(userId, ids);
    const delegations = rows.map((row) => parseStoredDelegation(row.signed));
    const operation = { ...revocationOperation(framework, delegator, delegations, BigInt(signed.nonce)), signature: signed.signature };
    const data = encodeFunctionData({ abi: EntryPoint, functionName: "handleOps", args: [[toPackedUserOperation(operation)], relayer] });
    const reverts = await simulate(chainId, { from: relayer, to: framework.EntryPoint, data });
    if (reverts) throw new AllowanceError(`The chain would refuse this revocation (${reverts}); sign it again.`, 409);
    const sent = await relay(chainId, { to: framework.EntryPoint, data }, async () => {});
    const receipt = await sent.receipt();
    const disabled = await onChain(chainId, (client) =>
      Promise.all(
        rows.map((row) =>
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
