import { getAddress, isAddress } from "viem";
import { z } from "zod";
import { db, type Tx } from "@/lib/db";
import { recordAudit, recordAuditIn, type AuditInput } from "@/lib/audit";
import { randomId } from "@/lib/crypto";
import { systemClock, type Clock } from "@/lib/clock";
import { config } from "@/lib/config";
import { AppError, NotFoundError } from "@/lib/http/errors";
import type { AgentContext } from "./agent-context";
import { assertionOptions, authenticationResponseSchema, verifyAssertion } from "@/lib/auth/passkeys";
import { guarded, guardedOptions, requireStepUp } from "@/lib/auth/step-up";
import type { CredentialKind } from "@/contract";
import { SEAL_FORMAT } from "./seal";
import { visibleName } from "@/lib/text/visible-text";
import { cancellationEvents, cancelPendingIn } from "./request-lifecycle";

/** Wallet names appear in approval headlines. */
export const credentialNameSchema = z
  .string()
  .trim()
  .min(1, "Name the wallet")
  .max(100, "A wallet name may be at most 100 characters")
  .superRefine(visibleName("A wallet name"));

/** An EVM address in its EIP-55 checksummed form, exactly. */
const checksummedAddressSchema = z
  .string()
  .refine(
    (value) => isAddress(value, { strict: false }) && getAddress(value) === value,
    "Enter a valid checksummed EVM address (0x followed by 40 hex digits, EIP-55 case)",
  );

const sealSchema = z.object({
  ciphertext: z.string().regex(SEAL_FORMAT.ciphertext, "ciphertext must be a sealed 32-byte key"),
  iv: z.string().regex(SEAL_FORMAT.iv, "iv must be 12 bytes"),
  prfSalt: z.string().regex(SEAL_FORMAT.prfSalt, "prfSalt must be 32 bytes"),
});

export const connectCredentialSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("evm"),
    name: credentialNameSchema,
    address: checksummedAddressSchema,
    seal: sealSchema,
    assertion: authenticationResponseSchema,
  }),
  z.object({ kind: z.literal("evm_watch"), name: credentialNameSchema, address: checksummedAddressSchema }),
]);
export type ConnectCredentialInput = z.infer<typeof connectCredentialSchema>;

/**
 * Step 1 of connecting a key: an assertion challenge for one of the person's
 * PRF-capable passkeys. The browser evaluates PRF with a fresh salt, seals the
 * key, and comes back with the assertion and the ciphertext only.
 */
export async function sealingOptions(userId: string, clock: Clock = systemClock) {
  const passkeys = await db().passkey.findMany({ where: { userId, prfCapable: true }, select: { id: true } });
  if (!passkeys.length) {
    throw new AppError(
      "no_prf_passkey",
      "None of your passkeys supports the PRF extension, so a key cannot be sealed under it. You can still add watch-only addresses.",
      409,
    );
  }
  const credentialId = randomId("cr_");
  const options = await assertionOptions("seal", { userId, subject: credentialId, allow: passkeys.map((passkey) => passkey.id) }, clock);
  return { credentialId, options };
}

async function assertNewAddress(userId: string, address: string) {
  if (await db().credential.findFirst({ where: { userId, address }, select: { id: true } })) {
    throw new AppError("address_taken", "This address is already connected", 409);
  }
}

/** Step 2: store a sealed key (or a watch-only address). */
export async function connectCredential(userId: string, input: ConnectCredentialInput, clock: Clock = systemClock) {
  await assertNewAddress(userId, input.address);
  const now = clock();
  let id = randomId("cr_");
  let seal;
  if (input.kind === "evm") {
    const { passkeyId, challenge } = await verifyAssertion(input.assertion, "seal", clock);
    if (challenge.userId !== userId || !challenge.subject)
      throw new AppError("invalid_challenge", "This passkey challenge was issued to another account", 400);
    const sealer = await db().passkey.findUniqueOrThrow({ where: { id: passkeyId }, select: { prfCapable: true } });
    if (!sealer.prfCapable) throw new AppError("no_prf_passkey", "This passkey does not support PRF, so it cannot seal a key", 409);
    id = challenge.subject;
    seal = { passkeyId, ...input.seal, createdAt: now };
  }
  const credential = await db().credential.create({
    data: {
      id,
      userId,
      name: input.name,
      kind: input.kind,
      address: input.address,
      createdAt: now,
      seals: seal ? { create: seal } : undefined,
    },
    select: { id: true, name: true, kind: true, address: true },
  });
  await recordAudit(
    {
      type: "credential.connected",
      userId,
      credentialId: credential.id,
      data: { kind: credential.kind, address: credential.address, name: credential.name },
    },
    clock,
  );
  return credential;
}

/**
 * Re-sealing an existing key under another passkey, step 1: a challenge that
 * only `passkeyId` may answer, bound to the credential. (The browser first
 * unseals the key with a passkey that already has it; that needs no server.)
 */
export async function resealOptions(userId: string, credentialId: string, passkeyId: string, clock: Clock = systemClock) {
  const credential = await db().credential.findFirst({
    where: { id: credentialId, userId, kind: "evm" },
    include: { seals: { select: { passkeyId: true, ciphertext: true, iv: true, prfSalt: true } } },
  });
  if (!credential) throw new NotFoundError("The wallet");
  const passkey = await db().passkey.findFirst({ where: { id: passkeyId, userId } });
  if (!passkey) throw new NotFoundError("The passkey");
  if (!passkey.prfCapable) throw new AppError("no_prf_passkey", "This passkey does not support PRF, so it cannot seal a key", 409);
  if (credential.seals.some((seal) => seal.passkeyId === passkeyId))
    throw new AppError("already_sealed", `${passkey.name} already unlocks ${credential.name}`, 409);
  const options = await guardedOptions(userId, guarded.sealWallet(credentialId, passkeyId), clock);
  const transports = new Map(
    (await db().passkey.findMany({ where: { userId }, select: { id: true, transports: true } })).map((row) => [
      row.id,
      JSON.parse(row.transports) as string[],
    ]),
  );
  return {
    options,
    address: credential.address,
    seals: credential.seals.map((seal) => ({ ...seal, transports: transports.get(seal.passkeyId) ?? [] })),
  };
}

export const addSealSchema = z.object({ seal: sealSchema, assertion: authenticationResponseSchema.optional() });

/**
 * Step 2: store the key sealed under the passkey that answered the challenge,
 * which must be the one that challenge was issued for, for this wallet.
 */
export async function addSeal(userId: string, credentialId: string, input: z.infer<typeof addSealSchema>, clock: Clock = systemClock) {
  const operation = guarded.sealWallet(credentialId, input.assertion?.id ?? "");
  const { passkeyId } = await requireStepUp(userId, operation, input.assertion, clock);
  const credential = await db().credential.findFirst({ where: { id: credentialId, userId, kind: "evm" } });
  if (!credential) throw new NotFoundError("The wallet");
  const sealer = await db().passkey.findUniqueOrThrow({ where: { id: passkeyId }, select: { prfCapable: true } });
  if (!sealer.prfCapable) throw new AppError("no_prf_passkey", "This passkey does not support PRF, so it cannot seal a key", 409);
  await db().credentialSeal.upsert({
    where: { credentialId_passkeyId: { credentialId, passkeyId } },
    create: { credentialId, passkeyId, ...input.seal, createdAt: clock() },
    update: { ...input.seal, createdAt: clock() },
  });
  await recordAudit({ type: "credential.resealed", userId, credentialId, data: { passkey: passkeyId } }, clock);
}

export async function listCredentials(userId: string) {
  const rows = await db().credential.findMany({
    where: { userId },
    select: {
      id: true,
      name: true,
      kind: true,
      address: true,
      createdAt: true,
      seals: { select: { passkeyId: true } },
      _count: { select: { grants: true } },
    },
    orderBy: { createdAt: "asc" },
  });
  return rows.map(({ seals, _count, ...row }) => ({
    ...row,
    kind: row.kind as CredentialKind,
    passkeyIds: seals.map((seal) => seal.passkeyId),
    grantCount: _count.grants,
  }));
}

export async function renameCredential(userId: string, credentialId: string, name: string, clock: Clock = systemClock) {
  const updated = await db().credential.updateMany({
    where: { id: credentialId, userId },
    data: { name: credentialNameSchema.parse(name) },
  });
  if (!updated.count) throw new NotFoundError("The wallet");
  await recordAudit({ type: "credential.renamed", userId, credentialId, data: { name } }, clock);
}

/**
 * What else ends with a removed wallet, inside the transaction that removes it (an allowance stops: lib/allowances/
 * stop.ts): the events to record with it, and what to do once it commits.
 */
export type EndsWithWallet = (tx: Tx, credentialId: string) => Promise<{ events: AuditInput[]; afterCommit: () => void }>;

/** Removes a credential, and with it its place in every grant, its pending requests and whatever `endsWith` ends. */
export async function removeCredential(userId: string, credentialId: string, endsWith: EndsWithWallet[] = [], clock: Clock = systemClock) {
  const reason = "The wallet was removed";
  const removed = await db().$transaction(async (tx) => {
    const credential = await tx.credential.findFirst({ where: { id: credentialId, userId } });
    if (!credential) return null;
    await tx.grantCredential.deleteMany({ where: { credentialId } });
    // deleteMany: a concurrent removal that got there first leaves nothing to delete, not an error.
    const deleted = await tx.credential.deleteMany({ where: { id: credentialId, userId } });
    if (!deleted.count) return null;
    const cancelled = await cancelPendingIn(tx, { credentialId }, reason, clock());
    const ended = [];
    for (const end of endsWith) ended.push(await end(tx, credentialId));
    await recordAuditIn(tx, [...cancellationEvents(cancelled, reason), ...ended.flatMap((end) => end.events)], clock);
    return { credential, ended };
  });
  if (!removed) throw new NotFoundError("The wallet");
  for (const end of removed.ended) end.afterCommit();
  await recordAudit({ type: "credential.removed", userId, credentialId, data: { address: removed.credential.address } }, clock);
}

/** "ca…@example.com": enough of the sign-in email for the person to tell their accounts apart, not an address to write to. */
function emailHint(email: string): string {
  const at = email.lastIndexOf("@");
  const local = at < 0 ? email : email.slice(0, at);
  return `${local.slice(0, local.length > 2 ? 2 : 1)}…${at < 0 ? "" : email.slice(at)}`;
}

/** The credentials in an agent's grant, as the agent may see them, and whose account and which client granted them. */
export function listGrantedCredentials(agent: AgentContext) {
  return {
    credentials: agent.credentials.map(({ credentialId, name, kind, address, mode }) => ({ id: credentialId, name, kind, address, mode })),
    account: { email_hint: emailHint(agent.userEmail), client_name: agent.clientName },
    chains: config().chains.map(({ id, name, symbol }) => ({ id, name, symbol })),
  };
}
