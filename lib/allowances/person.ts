// The person's side of revoking allowances on /clients. An allowance whose revocation was signed with it needs only
// the person's approval (any of their passkeys; nothing is signed, no key unsealed): the relayer sends what is stored.
// An older one needs the key: one passkey assertion both approves the step and, through its PRF output, unseals the
// wallet key in the browser, which signs the revocation (revocation-operation.ts). The same ceremony revokes a client
// and signs the disabling of its older allowances (lib/oauth/connected-clients.ts revokes the client with them).
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import type { Address, Hex } from "viem";
import { db } from "@/lib/db";
import { NotFoundError } from "@/lib/http/errors";
import { guarded, stepUpOptions, verifyStepUp } from "@/lib/auth/step-up";
import { recordAudit } from "@/lib/audit";
import { AllowanceError, frameworkFor } from "./allowances";
import { returnAgentAccount } from "./agent-account";
import { runsDeleGator } from "./guard";
import { assertRelayable, prepareRevocation, revokeAllowances, sendStoredRevocations } from "./revocation";
import type { RevocationToSign } from "./revocation-operation";

/** One revocation the browser signed: the allowances it disables, the EntryPoint nonce it was signed for. */
export type SignedRevocation = { allowanceIds: string[]; nonce: string; signature: string };

/** The wallet whose key signs, with the seals the browser can open it with. */
async function signingWallet(userId: string, credentialId: string) {
  const credential = await db().credential.findFirst({ where: { id: credentialId, userId }, include: { seals: true } });
  if (!credential?.seals.length) {
    throw new AllowanceError(
      "This allowance's wallet is not sealed under any of your passkeys here, so it cannot sign its revocation.",
      409,
    );
  }
  return {
    credentialId: credential.id,
    address: credential.address,
    seals: credential.seals.map(({ passkeyId, ciphertext, iv, prfSalt }) => ({ passkeyId, ciphertext, iv, prfSalt })),
    allow: credential.seals.map((seal) => seal.passkeyId),
  };
}

/** What the step-up of sending an allowance's stored revocation is bound to (no nonce: nothing is signed). */
const STORED_REVOCATION = { stored: true };

async function revocableAllowance(userId: string, allowanceId: string) {
  const allowance = await db().allowance.findFirst({ where: { id: allowanceId, userId } });
  if (!allowance) throw new NotFoundError("The allowance");
  if (allowance.status === "revoked") throw new AllowanceError("This allowance is already revoked.", 409);
  assertRelayable(allowance);
  return allowance;
}

/** Whether the allowance is revoked by the revocation stored with it: not once the chain would refuse that one. */
const sendsStored = (allowance: { revocationSignature: string | null; attention: string | null }) =>
  allowance.revocationSignature !== null && allowance.attention !== "revocation_refused";

/**
 * What "Revoke allowance" needs: with a stored revocation, a challenge any of the person's passkeys answers;
 * otherwise one only the wallet's sealing passkeys answer, and the revocation to sign.
 */
export async function allowanceRevocationOptions(userId: string, allowanceId: string) {
  const allowance = await revocableAllowance(userId, allowanceId);
  if (sendsStored(allowance)) {
    return { options: await stepUpOptions(userId, "revoke-allowance", allowanceId, STORED_REVOCATION), stored: true };
  }
  const { allow, ...wallet } = await signingWallet(userId, allowance.credentialId);
  const revocation = await prepareRevocation(userId, [allowanceId]);
  const options = await stepUpOptions(userId, "revoke-allowance", allowanceId, { nonce: revocation.nonce }, { allow });
  return { options, ...wallet, revocation };
}

/**
 * Revokes one allowance with the person's passkey approval: its stored revocation is sent (again, if an earlier send
 * was not confirmed); an older one needs their key's signature, made in the browser.
 */
export async function revokeAllowanceForUser(
  userId: string,
  allowanceId: string,
  input: { assertion: AuthenticationResponseJSON; nonce?: string; signature?: string },
): Promise<{ txHash: string | null }> {
  const allowance = await revocableAllowance(userId, allowanceId);
  if (sendsStored(allowance)) {
    await verifyStepUp(userId, "revoke-allowance", allowanceId, STORED_REVOCATION, input.assertion);
    // the person asks again: one held for their attention is sent again too
    await db().allowance.updateMany({
      where: { id: allowanceId, status: { in: ["active", "suspended", "revoking"] } },
      data: { status: "revoking", attention: null },
    });
    await sendStoredRevocations([allowanceId]);
    // a concurrent send may have been the one that disabled it: its transaction is the answer
    const { status, revocationTx } = await db().allowance.findUniqueOrThrow({ where: { id: allowanceId } });
    if (status !== "revoked" || !revocationTx)
      throw new AllowanceError("The revocation was not confirmed on chain; it stays stopped here.", 502);
    return { txHash: revocationTx };
  }
  if (!input.nonce || !input.signature)
    throw new AllowanceError("This allowance's revocation must be signed: send its nonce and signature.");
  await verifyStepUp(userId, "revoke-allowance", allowanceId, { nonce: input.nonce }, input.assertion);
  return revokeAllowances(userId, [allowanceId], { nonce: input.nonce, signature: input.signature as Hex });
}

/**
 * The client's live allowances without a stored revocation, one revocation to sign per chain, when they are all of
 * one wallet (one passkey opens one key); otherwise none here, and /clients offers each its own button after.
 */
async function clientAllowancesToSign(userId: string, clientId: string) {
  const grants = await db().grant.findMany({ where: { clientId, userId }, select: { id: true } });
  const allowances = await db().allowance.findMany({
    where: {
      userId,
      grantId: { in: grants.map((grant) => grant.id) },
      status: { in: ["active", "suspended", "revoking"] },
      expiresAt: { gt: new Date() },
      // those without a stored revocation the chain would take
      OR: [{ revocationSignature: null }, { attention: "revocation_refused" }],
    },
    orderBy: { id: "asc" },
  });
  const credentials = new Set(allowances.map((allowance) => allowance.credentialId));
  if (credentials.size !== 1) return null;
  const wallet = await signingWallet(userId, [...credentials][0]).catch(() => null);
  if (!wallet) return null;
  const chains = [...new Set(allowances.map((allowance) => allowance.chainId))];
  const revocations: (RevocationToSign & { allowanceIds: string[] })[] = [];
  for (const chainId of chains) {
    const allowanceIds = allowances.filter((allowance) => allowance.chainId === chainId).map((allowance) => allowance.id);
    revocations.push({ ...(await prepareRevocation(userId, allowanceIds)), allowanceIds });
  }
  return { wallet, revocations };
}

/** "Revoke <client>": the step-up challenge, and when its allowances can be signed in the same tap, what to sign. */
export async function clientRevocationOptions(userId: string, clientId: string) {
  const operation = guarded.revokeClient(clientId);
  const toSign = await clientAllowancesToSign(userId, clientId);
  if (!toSign) return { options: await stepUpOptions(userId, operation.purpose, operation.subject, operation.decision), revocations: [] };
  const { allow, ...wallet } = toSign.wallet;
  return {
    options: await stepUpOptions(userId, operation.purpose, operation.subject, operation.decision, { allow }),
    ...wallet,
    revocations: toSign.revocations,
  };
}

/**
 * The person takes back what the agent's account of one of their live allowances holds free of its payments on their
 * way (its float, decision 0038), the allowance going on: the next payment from the account tops it up again.
 */
export async function returnAgentAccountForUser(userId: string, allowanceId: string): Promise<{ txHashes: Hex[] }> {
  const allowance = await db().allowance.findFirst({ where: { id: allowanceId, userId, status: { in: ["active", "suspended"] } } });
  if (!allowance) throw new NotFoundError("The live allowance");
  return { txHashes: await returnAgentAccount(allowanceId, { live: true }) };
}

/**
 * The person resumes an allowance that was suspended for their attention, once they have looked: refused while its
 * wallet's address still runs other code. A `revoking` one is not resumed: it is being revoked.
 */
export async function resumeAllowanceForUser(userId: string, allowanceId: string): Promise<{ status: "active" }> {
  const allowance = await db().allowance.findFirst({ where: { id: allowanceId, userId } });
  if (!allowance || allowance.status !== "suspended") throw new NotFoundError("The suspended allowance");
  if (!(await runsDeleGator(allowance.chainId, frameworkFor(allowance.chainId), allowance.delegator as Address))) {
    throw new AllowanceError(
      "This wallet's address runs other code than the DeleGator the allowance was made for, so it cannot pay; revoke it instead.",
      409,
    );
  }
  const { count } = await db().allowance.updateMany({
    where: { id: allowanceId, status: "suspended" },
    data: { status: "active", attention: null },
  });
  if (count) {
    await recordAudit({
      type: "allowance.resumed",
      userId,
      credentialId: allowance.credentialId,
      data: { allowanceId, chainId: allowance.chainId, attention: allowance.attention },
    });
  }
  return { status: "active" };
}
