// Revoking an allowance with an empty wallet: the person signs an ERC-4337 UserOperation from their own (EIP-7702)
// account that calls DelegationManager.disableDelegation for each of the allowance's delegations; the relayer sends
// it straight to EntryPoint v0.7's handleOps and pays the gas. Its gas prices are 0, so the account owes the
// EntryPoint nothing and needs no coin. Spends are refused from the moment the revocation is asked for.
// An allowance made with its own revocation signed (revocation-operation.ts presignedRevocation) needs no new
// signature: `sendStoredRevocations` sends what was stored, for every path that stops allowances.
import { encodeFunctionData, getAddress, type Address, type Hex } from "viem";
import { toPackedUserOperation, type UserOperation } from "viem/account-abstraction";
import { DelegationManager, EntryPoint } from "@metamask/delegation-abis";
import { recordAudit } from "@/lib/audit";
import { db } from "@/lib/db";
import { NotFoundError } from "@/lib/http/errors";
import { onChain } from "@/lib/wallet/chains";
import { AllowanceError, findAllowance, frameworkFor, parseStoredDelegation } from "./allowances";
import { delegationToJson } from "./caveats";
import type { Framework } from "./framework";
import { presignedRevocation, revocationOperation, type RevocationToSign } from "./revocation-operation";
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
    const data = handleOps([operation], relayer);
    const reverts = await simulate(chainId, { from: relayer, to: framework.EntryPoint, data });
    if (reverts) throw new AllowanceError(`The chain would refuse this revocation (${reverts}); sign it again.`, 409);
    const sent = await relay(chainId, { to: framework.EntryPoint, data }, async () => {});
    const receipt = await sent.receipt();
    const disabled = await disabledOnChain(
      chainId,
      framework,
      rows.map((row) => row.hash as Hex),
    );
    // handleOps succeeds even when the operation's own call reverted: the delegations' state is the answer.
    if (receipt.status !== "success" || !rows.every((row) => disabled.has(row.hash))) {
      throw new AllowanceError(
        `The revocation's transaction ${sent.hash} did not disable the allowances; they stay stopped here, sign again.`,
        502,
      );
    }
    await markRevoked(allowances.map((allowance) => ({ ...allowance, txHash: sent.hash })));
    return { txHash: sent.hash };
  });
}

/** EntryPoint.handleOps of `operations`, the relayer taking any refund. */
function handleOps(operations: UserOperation<"0.7">[], relayer: Address): Hex {
  return encodeFunctionData({
    abi: EntryPoint,
    functionName: "handleOps",
    args: [operations.map((operation) => toPackedUserOperation(operation)), relayer],
  });
}

/** Those of `hashes` that the DelegationManager shows disabled. */
async function disabledOnChain(chainId: number, framework: Framework, hashes: Hex[]): Promise<Set<string>> {
  const disabled = await onChain(chainId, (client) =>
    Promise.all(
      hashes.map((hash) =>
        client.readContract({
          address: framework.DelegationManager,
          abi: DelegationManager,
          functionName: "disabledDelegations",
          args: [hash],
        }),
      ),
    ),
  );
  return new Set(hashes.filter((_, index) => disabled[index]));
}

/**
 * Marks each allowance `revoked` with the transaction that disabled it, unless another caller already did: only
 * the one whose update took records `allowance.revoked`, so a revocation sent twice is audited once.
 */
async function markRevoked(allowances: { id: string; userId: string; credentialId: string; txHash: string | null }[]) {
  for (const allowance of allowances) {
    const { count } = await db().allowance.updateMany({
      where: { id: allowance.id, status: { not: "revoked" } },
      data: { status: "revoked", revokedAt: new Date(), revocationTx: allowance.txHash },
    });
    if (!count) continue;
    await recordAudit({
      type: "allowance.revoked",
      userId: allowance.userId,
      credentialId: allowance.credentialId,
      data: { allowanceId: allowance.id, txHash: allowance.txHash },
    });
  }
}

/**
 * Sends the stored revocations of those of `allowanceIds` that are `revoking` and have one: one handleOps per chain
 * carrying them all, under the allowances' leases (spends in flight settle first; a second sender waits, then finds
 * them `revoked` and sends nothing). Each is `revoked` once the chain shows all its delegations disabled; one the
 * chain does not confirm stays `revoking` (still refusing spends) and this throws, naming the transaction.
 */
export async function sendStoredRevocations(allowanceIds: string[]): Promise<void> {
  const stored = await db().allowance.findMany({
    where: { id: { in: [...new Set(allowanceIds)] }, status: "revoking", revocationSignature: { not: null } },
    select: { id: true, chainId: true },
    orderBy: { id: "asc" },
  });
  const failures: unknown[] = [];
  for (const chainId of [...new Set(stored.map((allowance) => allowance.chainId))]) {
    const ids = stored.filter((allowance) => allowance.chainId === chainId).map((allowance) => allowance.id);
    await sendOnChain(chainId, ids).catch((error: unknown) => failures.push(error));
  }
  if (failures.length) throw failures[0];
}

async function sendOnChain(chainId: number, ids: string[]): Promise<void> {
  const framework = frameworkFor(chainId);
  const relayer = relayerOn(chainId).address;
  await holdingAll(ids, async () => {
    const allowances = await db().allowance.findMany({
      where: { id: { in: ids }, status: "revoking", revocationSignature: { not: null } },
      include: { delegations: true },
      orderBy: { id: "asc" },
    });
    // Already disabled (by an earlier send whose confirmation was lost, say): recorded, not sent again.
    const before = await disabledOnChain(
      chainId,
      framework,
      allowances.flatMap((allowance) => allowance.delegations.map((row) => row.hash as Hex)),
    );
    const isDisabled = (allowance: (typeof allowances)[number], disabled: Set<string>) =>
      allowance.delegations.every((row) => disabled.has(row.hash));
    await markRevoked(
      allowances
        .filter((allowance) => isDisabled(allowance, before))
        .map((allowance) => ({ ...allowance, txHash: allowance.revocationTx })),
    );
    const pending = allowances.filter((allowance) => !isDisabled(allowance, before));
    // One the chain would refuse must not sink the others in the same handleOps (which reverts whole on one bad op).
    const sendable: { allowance: (typeof pending)[number]; operation: UserOperation<"0.7"> }[] = [];
    for (const allowance of pending) {
      const delegations = allowance.delegations.map((row) => parseStoredDelegation(row.signed));
      const operation = {
        ...presignedRevocation(framework, getAddress(allowance.delegator), delegations),
        signature: allowance.revocationSignature as Hex,
      };
      const reverts = await simulate(chainId, { from: relayer, to: framework.EntryPoint, data: handleOps([operation], relayer) });
      if (!reverts) sendable.push({ allowance, operation });
    }
    if (!pending.length) return;
    if (!sendable.length) throw new AllowanceError("The chain would refuse the stored revocations; they stay stopped here.", 409);
    const sentIds = sendable.map(({ allowance }) => allowance.id);
    const sent = await relay(
      chainId,
      {
        to: framework.EntryPoint,
        data: handleOps(
          sendable.map(({ operation }) => operation),
          relayer,
        ),
      },
      // recorded before it leaves: a process that stops now still knows which transaction disabled them
      async (hash) =>
        void (await db().allowance.updateMany({ where: { id: { in: sentIds }, status: "revoking" }, data: { revocationTx: hash } })),
    );
    await sent.receipt();
    const after = await disabledOnChain(
      chainId,
      framework,
      pending.flatMap((allowance) => allowance.delegations.map((row) => row.hash as Hex)),
    );
    const confirmed = sendable.filter(({ allowance }) => isDisabled(allowance, after));
    await markRevoked(confirmed.map(({ allowance }) => ({ ...allowance, txHash: sent.hash })));
    if (confirmed.length < pending.length) {
      throw new AllowanceError(`The revocation's transaction ${sent.hash} did not disable every allowance; they stay stopped here.`, 502);
    }
  });
}
