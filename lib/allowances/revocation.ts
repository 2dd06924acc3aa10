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
import { writing } from "@/lib/db/transaction-script";
import { NotFoundError } from "@/lib/http/errors";
import { onChain } from "@/lib/wallet/chains";
import { AllowanceError, findAllowance, frameworkFor, parseStoredDelegation, signerOf } from "./allowances";
import { delegationToJson, EXPIRED_MARGIN_MS } from "./caveats";
import type { Framework } from "@/lib/wallet/delegation-framework";
import { holdForPerson, runsDeleGator } from "./guard";
import { operationTypedData, presignedRevocation, revocationOperation, type RevocationToSign } from "./revocation-operation";
import { withLease } from "./lease";
import { WouldRevertError } from "@/lib/wallet/reverts";
import { relay, relayerOn } from "./relay";

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
  const { allowances: asked, rows: named, delegator: account, chainId, framework } = await revocable(userId, allowanceIds);
  if (asked.some((allowance) => allowance.status === "revoked")) throw new AllowanceError("An allowance named is already revoked.", 409);
  // Nothing changes for a revocation the wallet did not sign: checked before the allowances stop.
  const unsigned = revocationOperation(
    framework,
    account,
    named.map((row) => parseStoredDelegation(row.signed)),
    BigInt(signed.nonce),
  );
  if (signerOf(operationTypedData(framework, chainId, unsigned), signed.signature) !== account)
    throw new AllowanceError("This revocation is not the wallet's signature over disabling exactly these allowances.");
  const ids = asked.map((allowance) => allowance.id);
  await db().allowance.updateMany({ where: { id: { in: ids }, status: { not: "revoked" } }, data: { status: "revoking" } });
  const relayer = relayerOn(chainId).address;
  // Waits for spends in flight, so that what they sent is settled before the revocation goes out.
  return holdingAll(ids, async () => {
    const { allowances, rows, delegator } = await revocable(userId, ids);
    const delegations = rows.map((row) => parseStoredDelegation(row.signed));
    const operation = { ...revocationOperation(framework, delegator, delegations, BigInt(signed.nonce)), signature: signed.signature };
    const data = handleOps([operation], relayer);
    let sent;
    try {
      sent = await relay(chainId, { to: framework.EntryPoint, data }, { purpose: "revocation", userId, allowanceId: ids[0] });
    } catch (error) {
      if (error instanceof WouldRevertError)
        throw new AllowanceError(`The chain would refuse this revocation (${error.why}); sign it again.`, 409);
      throw error;
    }
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
async function markRevoked(
  allowances: { id: string; userId: string; credentialId: string; txHash: string | null }[],
  how: { expired?: boolean } = {},
) {
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
      data: { allowanceId: allowance.id, txHash: allowance.txHash, ...how },
    });
  }
}

/**
 * Sends the stored revocations of those of `allowanceIds` that are `revoking` and have one, each allowance in a
 * handleOps of its own (one account's code cannot sink another's), under its lease (spends in flight settle first; a
 * second sender waits, then finds it `revoked` and sends nothing). Nothing is sent for an allowance that has expired
 * (its delegations are dead on chain), nor for one whose account runs other code than the DeleGator or whose relayed
 * revocation reverted: those wait for the person. Each is `revoked` once the chain shows all its delegations disabled;
 * one the chain does not confirm stays `revoking` (still refusing spends) and this throws, naming the transaction.
 */
export async function sendStoredRevocations(allowanceIds: string[]): Promise<void> {
  const stored = await db().allowance.findMany({
    where: { id: { in: [...new Set(allowanceIds)] }, status: "revoking", revocationSignature: { not: null }, attention: null },
    select: { id: true },
    orderBy: { id: "asc" },
  });
  const failures: unknown[] = [];
  for (const { id } of stored) await sendStored(id).catch((error: unknown) => failures.push(error));
  if (failures.length) throw failures[0];
}

async function sendStored(id: string): Promise<void> {
  await holdingAll([id], async () => {
    const allowance = await db().allowance.findUnique({ where: { id }, include: { delegations: true } });
    if (!allowance || allowance.status !== "revoking" || !allowance.revocationSignature || allowance.attention) return;
    const { chainId } = allowance;
    if (allowance.expiresAt.getTime() < Date.now() - EXPIRED_MARGIN_MS) {
      await markRevoked([{ ...allowance, txHash: null }], { expired: true });
      return;
    }
    const framework = frameworkFor(chainId);
    const hashes = allowance.delegations.map((row) => row.hash as Hex);
    // Already disabled (by an earlier send whose confirmation was lost, say): recorded, not sent again.
    const isDisabled = (disabled: Set<string>) => hashes.every((hash) => disabled.has(hash));
    if (isDisabled(await disabledOnChain(chainId, framework, hashes))) {
      await markRevoked([{ ...allowance, txHash: allowance.revocationTx }]);
      return;
    }
    const delegator = getAddress(allowance.delegator);
    if (!(await runsDeleGator(chainId, framework, delegator))) {
      await holdForPerson(id, "code_changed");
      throw new AllowanceError("The wallet's address no longer runs the DeleGator: its revocation waits for the person.", 409);
    }
    const relayer = relayerOn(chainId).address;
    const operation = {
      ...presignedRevocation(
        framework,
        delegator,
        allowance.delegations.map((row) => parseStoredDelegation(row.signed)),
      ),
      signature: allowance.revocationSignature as Hex,
    };
    let sent;
    try {
      sent = await relay(
        chainId,
        { to: framework.EntryPoint, data: handleOps([operation], relayer) },
        { purpose: "revocation", userId: allowance.userId, allowanceId: id },
        // recorded before it leaves: a process that stops now still knows which transaction disabled it
        { recordWith: (hash) => [writing(`UPDATE "Allowance" SET "revocationTx" = ? WHERE "id" = ? AND "status" = 'revoking'`, hash, id)] },
      );
    } catch (error) {
      // A rehearsal costs nothing: a later resend asks the chain again.
      if (error instanceof WouldRevertError) throw new AllowanceError(`The chain would refuse the stored revocation (${error.why}).`, 409);
      throw error;
    }
    const receipt = await sent.receipt();
    if (receipt.status === "success" && isDisabled(await disabledOnChain(chainId, framework, hashes))) {
      await markRevoked([{ ...allowance, txHash: sent.hash }]);
      return;
    }
    // Paid for and refused anyway: not sent again, for the person to look at.
    await holdForPerson(id, "relay_reverted", { txHash: sent.hash });
    throw new AllowanceError(`The revocation's transaction ${sent.hash} did not disable the allowance; it stays stopped here.`, 502);
  });
}
