// Revoking an allowance with an empty wallet: the person signs an ERC-4337 UserOperation from their own (EIP-7702)
// account that calls DelegationManager.disableDelegation for each of the allowance's delegations; the relayer sends
// it straight to EntryPoint v0.7's handleOps and pays the gas. Its gas prices are 0, so the account owes the
// EntryPoint nothing and needs no coin. Spends are refused from the moment the revocation is asked for.
// An allowance made with its own revocation signed (revocation-operation.ts presignedRevocation) needs no new
// signature: `sendStoredRevocations` sends what was stored, for every path that stops allowances.
import { encodeFunctionData, getAddress, hexToBytes, numberToHex, type Address, type Hex, type PublicClient } from "viem";
import { toPackedUserOperation, type UserOperation } from "viem/account-abstraction";
import { DelegationManager, EntryPoint } from "@metamask/delegation-abis";
import { recordAudit } from "@/lib/audit";
import { db } from "@/lib/db";
import { writing } from "@/lib/db/transaction-script";
import { NotFoundError } from "@/lib/http/errors";
import { spendRateLimit } from "@/lib/limits/rate-limit";
import { onChain } from "@/lib/wallet/chains";
import { AllowanceError, findAllowance, frameworkFor, parseStoredDelegation, signerOf } from "./allowances";
import { delegationToJson, EXPIRED_MARGIN_MS } from "./caveats";
import type { Framework } from "@/lib/wallet/delegation-framework";
import { holdForPerson, runsDeleGator } from "./guard";
import type { Delegation } from "./caveats";
import {
  legacyRevocationCallGas,
  operationTypedData,
  presignedRevocation,
  revocationCallGas,
  revocationOperation,
  type RevocationToSign,
} from "./revocation-operation";
import { withLease } from "./lease";
import { returnAgentAccount } from "./agent-account";
import { asRevert, WouldRevertError } from "@/lib/wallet/reverts";
import { relay, relayerOn, settledValue } from "./relay";

/**
 * The person's allowances, which one signature revokes only if they share one account on one chain; with their
 * delegations still enabled on chain (one the person disabled from their own address would make the whole batch
 * revert), in one order (by hash) that the browser signs and the server rebuilds.
 */
async function revocable(userId: string, allowanceIds: string[]) {
  const allowances = await Promise.all([...new Set(allowanceIds)].sort().map(findAllowance));
  const [first] = allowances;
  if (!first) throw new AllowanceError("Name the allowances to revoke.");
  if (allowances.some((allowance) => allowance.userId !== userId)) throw new NotFoundError("The allowance");
  if (allowances.some((allowance) => allowance.chainId !== first.chainId || allowance.delegator !== first.delegator)) {
    throw new AllowanceError("One revocation covers the allowances of one wallet on one chain.");
  }
  const framework = frameworkFor(first.chainId);
  const all = allowances.flatMap((allowance) => allowance.delegations);
  const disabled = await disabledOnChain(
    first.chainId,
    framework,
    all.map((row) => row.hash as Hex),
  );
  const rows = all.filter((row) => !disabled.has(row.hash)).sort((a, b) => (a.hash < b.hash ? -1 : 1));
  return { allowances, rows, delegator: getAddress(first.delegator), chainId: first.chainId, framework };
}

/**
 * Refuses to relay a revocation of an allowance whose relayed revocation was paid for and refused by the chain: the
 * relayer pays for one such failure, so that no account can make it pay again and again.
 */
export function assertRelayable(allowance: { attention: string | null }): void {
  if (allowance.attention === "revocation_reverted")
    throw new AllowanceError(
      "The relayer already paid for a revocation of this allowance that the chain refused, and pays for no other: it " +
        "stays stopped here; disable it from the wallet itself (with coin of its own) or ask the operator.",
      409,
    );
}

/** Calldata's intrinsic gas: what a transaction carrying `data` pays before its code runs. */
function calldataGas(data: Hex): bigint {
  const bytes = hexToBytes(data);
  const zero = bytes.filter((byte) => byte === 0).length;
  return 21_000n + 4n * BigInt(zero) + 16n * BigInt(bytes.length - zero);
}

/**
 * The operation's call run as the EntryPoint runs it inside handleOps, with exactly its signed gas limit. handleOps
 * succeeds, and the relayer pays, when the call inside it fails (a delegation already disabled, too little gas): the
 * relayer's own rehearsal of handleOps cannot see that, this one does, and nothing is sent.
 */
async function rehearseInside(client: PublicClient, framework: Framework, operation: UserOperation<"0.7">): Promise<void> {
  const gas = operation.callGasLimit + calldataGas(operation.callData);
  try {
    await client.request({
      method: "eth_call",
      params: [{ from: framework.EntryPoint, to: operation.sender, data: operation.callData, gas: numberToHex(gas) }, "pending"],
    });
  } catch (error) {
    throw asRevert(error);
  }
}

/**
 * What the relayer checks before it pays for a revocation, in the exchange that sends it: the account still runs the
 * DeleGator (other code could behave one way in a rehearsal and another on chain), and the call inside handleOps
 * succeeds.
 */
function revocationChecks(chainId: number, framework: Framework, operation: UserOperation<"0.7">) {
  return async (client: PublicClient) => {
    const [deleGator, inside] = await Promise.allSettled([
      runsDeleGator(chainId, framework, operation.sender),
      rehearseInside(client, framework, operation),
    ]);
    if (!settledValue(deleGator)) throw new CodeChangedError();
    settledValue(inside);
  };
}

/** The wallet's address runs other code than the DeleGator: the relayer sends nothing for it. */
class CodeChangedError extends AllowanceError {
  constructor() {
    super("The wallet's address no longer runs the DeleGator: its revocation waits for the person.", 409);
  }
}

/** Runs `work` holding every allowance's lease, taken in id order so that two revocations cannot wait on each other. */
function holdingAll<T>(ids: string[], work: () => Promise<T>): Promise<T> {
  const [id, ...rest] = ids;
  return id ? withLease(`allowance:${id}`, () => holdingAll(rest, work)) : work();
}

/** The revocation to sign now (one passkey approval for all the allowances): what the browser builds and signs. */
export async function prepareRevocation(userId: string, allowanceIds: string[]): Promise<RevocationToSign> {
  const { allowances, rows, delegator, chainId, framework } = await revocable(userId, allowanceIds);
  if (!rows.length) {
    await markRevoked(allowances.map((allowance) => ({ ...allowance, txHash: allowance.revocationTx })));
    throw new AllowanceError("Every delegation of these allowances is already disabled on chain: they are revoked now.", 409);
  }
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
 * line on; they are `revoked` once the chain shows every delegation disabled. If the rehearsal refuses it, or the
 * chain does not confirm it, they stay `revoking` (still refusing spends): after a refusal that cost nothing the person
 * may sign again; after one the relayer paid for, it relays no other revocation of them.
 */
export async function revokeAllowances(
  userId: string,
  allowanceIds: string[],
  signed: { nonce: string; signature: Hex },
): Promise<{ txHash: Hex | null }> {
  await spendRateLimit("revocation", { person: userId });
  const { allowances: asked, rows: named, delegator: account, chainId, framework } = await revocable(userId, allowanceIds);
  if (asked.some((allowance) => allowance.status === "revoked")) throw new AllowanceError("An allowance named is already revoked.", 409);
  asked.forEach(assertRelayable);
  const ids = asked.map((allowance) => allowance.id);
  if (!named.length) {
    // every delegation is disabled already (from the person's own address, say): nothing to send
    await markRevoked(asked.map((allowance) => ({ ...allowance, txHash: allowance.revocationTx })));
    return { txHash: null };
  }
  // Nothing changes for a revocation the wallet did not sign: checked before the allowances stop.
  const unsigned = revocationOperation(
    framework,
    account,
    named.map((row) => parseStoredDelegation(row.signed)),
    BigInt(signed.nonce),
  );
  if (signerOf(operationTypedData(framework, chainId, unsigned), signed.signature) !== account)
    throw new AllowanceError("This revocation is not the wallet's signature over disabling exactly these allowances.");
  await db().allowance.updateMany({ where: { id: { in: ids }, status: { not: "revoked" } }, data: { status: "revoking" } });
  const relayer = relayerOn(chainId, "revocations").address;
  // Waits for spends in flight, so that what they sent is settled before the revocation goes out.
  return holdingAll(ids, async () => {
    const { allowances, rows, delegator } = await revocable(userId, ids);
    allowances.forEach(assertRelayable);
    const delegations = rows.map((row) => parseStoredDelegation(row.signed));
    const operation = { ...revocationOperation(framework, delegator, delegations, BigInt(signed.nonce)), signature: signed.signature };
    let sent;
    try {
      sent = await relay(
        chainId,
        { to: framework.EntryPoint, data: handleOps([operation], relayer) },
        { purpose: "revocation", userId, allowanceId: ids[0] },
        { checks: revocationChecks(chainId, framework, operation) },
      );
    } catch (error) {
      if (error instanceof WouldRevertError)
        throw new AllowanceError(`The chain would refuse this revocation (${error.why}); nothing was sent, sign it again.`, 409);
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
      for (const id of ids) await holdForPerson(id, "revocation_reverted", { txHash: sent.hash });
      throw new AllowanceError(
        `The revocation's transaction ${sent.hash} did not disable the allowances; they stay stopped here, and the relayer ` +
          "pays for no other revocation of them.",
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
    // What its agent account holds goes back to the person; one that cannot now stays there, signing nothing more,
    // until reconciliation's next pass sends it (returnStoppedAgentAccounts).
    await returnAgentAccount(allowance.id).catch((error: unknown) =>
      console.error(`allowance ${allowance.id}: its agent account's balance was not returned: ${(error as Error).message}`),
    );
  }
}

/**
 * The stored revocation's operation with its signature: signed with today's gas limit, or with the one revocations
 * were signed with before (legacyRevocationCallGas), whichever the signature covers. The server rebuilds it from the
 * delegations alone, so only the disabling of exactly them is ever sent.
 */
function storedOperation(framework: Framework, chainId: number, delegator: Address, delegations: Delegation[], signature: Hex) {
  const signedWith = [revocationCallGas, legacyRevocationCallGas]
    .map((callGas) => presignedRevocation(framework, delegator, delegations, callGas))
    .find((operation) => signerOf(operationTypedData(framework, chainId, operation), signature) === delegator);
  if (!signedWith) throw new AllowanceError("The stored revocation is not the wallet's signature over disabling this allowance.", 409);
  return { ...signedWith, signature };
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
    const delegations = allowance.delegations.map((row) => parseStoredDelegation(row.signed));
    const operation = storedOperation(framework, chainId, delegator, delegations, allowance.revocationSignature as Hex);
    const relayer = relayerOn(chainId, "revocations").address;
    let sent;
    try {
      sent = await relay(
        chainId,
        { to: framework.EntryPoint, data: handleOps([operation], relayer) },
        { purpose: "revocation", userId: allowance.userId, allowanceId: id },
        {
          checks: revocationChecks(chainId, framework, operation),
          // recorded before it leaves: a process that stops now still knows which transaction disabled it
          recordWith: (hash) => [writing(`UPDATE "Allowance" SET "revocationTx" = ? WHERE "id" = ? AND "status" = 'revoking'`, hash, id)],
        },
      );
    } catch (error) {
      if (error instanceof CodeChangedError) await holdForPerson(id, "code_changed");
      // Refused by the rehearsal (a delegation the person disabled themselves, a limit signed too short): it would
      // never land, so it is not sent again; the person signs a new one, of the delegations still enabled.
      if (error instanceof WouldRevertError) {
        await holdForPerson(id, "revocation_refused", { why: error.why });
        throw new AllowanceError(`The chain would refuse the stored revocation (${error.why}); nothing was sent.`, 409);
      }
      throw error;
    }
    const receipt = await sent.receipt();
    if (receipt.status === "success" && isDisabled(await disabledOnChain(chainId, framework, hashes))) {
      await markRevoked([{ ...allowance, txHash: sent.hash }]);
      return;
    }
    // Paid for and refused anyway: no revocation of it is relayed again (assertRelayable).
    await holdForPerson(id, "revocation_reverted", { txHash: sent.hash });
    throw new AllowanceError(`The revocation's transaction ${sent.hash} did not disable the allowance; it stays stopped here.`, 502);
  });
}
