import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { z } from "zod";
import { db } from "@/lib/db";
import { config } from "@/lib/config";
import { recordAudit } from "@/lib/audit";
import { randomId } from "@/lib/crypto";
import { systemClock, type Clock } from "@/lib/clock";
import { AppError, NotFoundError } from "@/lib/http/errors";
import { visibleName } from "@/lib/text/visible-text";
import { reading, required, runTransaction, type Query, type TransactionScript } from "@/lib/db/transaction-script";
import { verifiedAssertion } from "./assertion";
import {
  challengeOf,
  consumeChallenge,
  issueChallenge,
  spendChallengeWith,
  type ChallengePurpose,
  type ConsumedChallenge,
} from "./challenges";

const RP_NAME = "Agent Wallet";

class PasskeyError extends AppError {
  constructor(message: string, status = 400) {
    super("passkey_rejected", message, status);
  }
}

const emailSchema = z.string().trim().toLowerCase().pipe(z.email("Enter a valid email address").max(254));
export const passkeyNameSchema = z
  .string()
  .trim()
  .min(1, "Name the passkey")
  .max(100, "A passkey name may be at most 100 characters")
  .superRefine(visibleName("A passkey name"));

/** A WebAuthn response as the browser library posts it; checked in depth by @simplewebauthn/server. */
function webauthnResponseSchema<Response>(message: string) {
  return z.custom<Response>(
    (value) =>
      typeof value === "object" &&
      value !== null &&
      typeof (value as { id?: unknown }).id === "string" &&
      typeof (value as { response?: { clientDataJSON?: unknown } }).response?.clientDataJSON === "string",
    message,
  );
}
export const registrationResponseSchema = webauthnResponseSchema<RegistrationResponseJSON>("A passkey registration response is required");
export const authenticationResponseSchema = webauthnResponseSchema<AuthenticationResponseJSON>("A passkey assertion is required");

function expectations() {
  const { appUrl, rpId } = config();
  return { expectedOrigin: appUrl, expectedRPID: rpId };
}

/** Options for creating a passkey: discoverable, user verification required, PRF requested. */
async function creationOptions(user: { id: string; email: string }, purpose: ChallengePurpose, data: unknown, clock: Clock) {
  const existing = await db().passkey.findMany({ where: { userId: user.id }, select: { id: true } });
  const issued = await issueChallenge(purpose, { userId: purpose === "sign-up" ? null : user.id, data }, clock);
  const options = await generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: config().rpId,
    userName: user.email,
    userID: new TextEncoder().encode(user.id),
    challenge: issued.challenge,
    attestationType: "none",
    excludeCredentials: existing.map((passkey) => ({ id: passkey.id })),
    authenticatorSelection: { residentKey: "required", userVerification: "required" },
    extensions: { prf: {} } as never,
  });
  // generateRegistrationOptions encodes the challenge it was given; keep ours as issued.
  return { ...options, challenge: issued.challenge } satisfies PublicKeyCredentialCreationOptionsJSON;
}

async function verifyCreation(response: RegistrationResponseJSON, consumed: ConsumedChallenge) {
  let verification;
  try {
    verification = await verifyRegistrationResponse({
      response,
      expectedChallenge: consumed.challenge,
      ...expectations(),
      requireUserVerification: true,
    });
  } catch (error) {
    throw new PasskeyError(`The passkey could not be verified: ${(error as Error).message}`);
  }
  if (!verification.verified) throw new PasskeyError("The passkey could not be verified");
  const { credential } = verification.registrationInfo;
  const prf = (response.clientExtensionResults as { prf?: { enabled?: boolean } }).prf;
  return {
    id: credential.id,
    publicKey: Buffer.from(credential.publicKey),
    counter: credential.counter,
    transports: JSON.stringify(credential.transports ?? []),
    prfCapable: prf?.enabled === true,
  };
}

/**
 * Step 1 of sign-up: a new user id is reserved in the challenge, nothing is stored yet. Whether the email has
 * an account is not looked up here, so these options cannot be used to find out (docs/security.md).
 */
export async function signUpOptions(rawEmail: string, clock: Clock = systemClock) {
  const email = emailSchema.parse(rawEmail);
  const userId = randomId("u_");
  return creationOptions({ id: userId, email }, "sign-up", { email, userId }, clock);
}

class SignUpRefusedError extends AppError {
  constructor() {
    super("sign_up_refused", "This passkey could not create an account. If you already have one, sign in with its passkey instead.", 400);
  }
}

/** Step 2 of sign-up: verify the new passkey and create the user with it. */
export async function completeSignUp(response: RegistrationResponseJSON, clock: Clock = systemClock) {
  const consumed = await consumeChallenge(challengeOf(response.response.clientDataJSON), "sign-up", clock);
  const { email, userId } = consumed.data as { email: string; userId: string };
  const passkey = await verifyCreation(response, consumed);
  const now = clock();
  try {
    await db().user.create({
      data: { id: userId, email, createdAt: now, passkeys: { create: { ...passkey, name: "Passkey 1", createdAt: now, lastUsedAt: now } } },
    });
  } catch (error) {
    // The same answer as any other refused registration: it does not say that this email has an account.
    if ((error as { code?: string }).code === "P2002") throw new SignUpRefusedError();
    throw error;
  }
  await recordAudit({ type: "user.signed_up", userId, data: { passkey: passkey.id, canSealKeys: passkey.prfCapable } }, clock);
  return { id: userId, email };
}

/** The allowed passkeys with their transports, so the browser asks only authenticators that can answer. */
async function allowList(ids: string[]) {
  const rows = await db().passkey.findMany({ where: { id: { in: ids } }, select: { id: true, transports: true } });
  return rows.map((row) => ({ id: row.id, transports: JSON.parse(row.transports) as AuthenticatorTransport[] }));
}

/** Options for an assertion; `allow` restricts which passkeys may answer. */
export async function assertionOptions(
  purpose: ChallengePurpose,
  binding: { userId?: string | null; subject?: string | null; data?: unknown; allow?: string[] } = {},
  clock: Clock = systemClock,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const issued = await issueChallenge(purpose, binding, clock);
  const options = await generateAuthenticationOptions({
    rpID: config().rpId,
    challenge: issued.challenge,
    userVerification: "required",
    allowCredentials: binding.allow ? await allowList(binding.allow) : undefined,
  });
  return { ...options, challenge: issued.challenge };
}

const PASSKEY = `SELECT "id", "userId", "publicKey", "counter", "transports" FROM "Passkey" WHERE "id" = ?`;

type StoredPasskey = { id: string; userId: string; publicKey: Uint8Array; counter: number; transports: string };

/** An assertion checked in full but for its passkey's signature counter, which `counterMoved` moves. */
export type CheckedAssertion = {
  passkeyId: string;
  userId: string;
  challenge: ConsumedChallenge;
  /**
   * Moves the passkey's counter, in the transaction of what the assertion is for; refuses (rolling that back) when
   * the counter did not increase.
   */
  counterMoved: () => TransactionScript<void>;
};

/**
 * An assertion answering a challenge of `purpose`, its challenge spent and its passkey read, with `reads` read in the
 * same round trip (spendChallengeWith); `checked()` checks it: the challenge must have been spent, the passkey must
 * exist (and belong to the challenge's user when it names one, and be one of the passkeys it allowed when it named
 * those), origin, RP ID, user verification and signature are checked. The counter is the caller's to move, before it
 * acts on anything else (verifyAssertion).
 */
export async function presentedAssertion(
  response: AuthenticationResponseJSON,
  purpose: ChallengePurpose,
  reads: Query[] = [],
  clock: Clock = systemClock,
): Promise<{ rows: unknown[][]; checked: () => Promise<CheckedAssertion> }> {
  const spent = await spendChallengeWith(challengeOf(response.response.clientDataJSON), purpose, clock(), [
    reading(PASSKEY, response.id),
    ...reads,
  ]);
  const [[passkey], ...rows] = spent.rows as [StoredPasskey[], ...unknown[][]];
  return { rows, checked: async () => checkedAssertion(response, await spent.consumed(), passkey, clock) };
}

/** checkAssertion's checks, on the challenge it spent and the passkey it read. */
async function checkedAssertion(
  response: AuthenticationResponseJSON,
  consumed: ConsumedChallenge,
  passkey: StoredPasskey | undefined,
  clock: Clock,
): Promise<CheckedAssertion> {
  if (!passkey) throw new PasskeyError("This passkey is not registered with Agent Wallet", 401);
  if (consumed.userId && consumed.userId !== passkey.userId) throw new PasskeyError("This passkey belongs to another account", 401);
  // The browser's allowCredentials is only a hint to the authenticator: the server holds the ceremony to it.
  if (consumed.allow && !consumed.allow.includes(passkey.id)) {
    throw new PasskeyError("This passkey was not one of those asked for: answer with a passkey the request named", 403);
  }
  let verification;
  try {
    verification = await verifiedAssertion(
      response,
      { expectedChallenge: consumed.challenge, ...expectations() },
      {
        id: passkey.id,
        publicKey: new Uint8Array(passkey.publicKey),
        counter: Number(passkey.counter),
        transports: JSON.parse(passkey.transports),
      },
    );
  } catch (error) {
    throw new PasskeyError(`The passkey assertion was rejected: ${(error as Error).message}`, 401);
  }
  if (!verification.verified) throw new PasskeyError("The passkey assertion was rejected", 401);
  const { newCounter } = verification;
  return {
    passkeyId: passkey.id,
    userId: passkey.userId,
    challenge: consumed,
    counterMoved: () => counterMoved(passkey.id, newCounter, clock()),
  };
}

/** An assertion answering a challenge of `purpose`, checked in full but for its counter (presentedAssertion). */
export async function checkAssertion(
  response: AuthenticationResponseJSON,
  purpose: ChallengePurpose,
  clock: Clock = systemClock,
): Promise<CheckedAssertion> {
  return (await presentedAssertion(response, purpose, [], clock)).checked();
}

/**
 * The counter only moves forward; a clone replaying an old counter is refused, and, since the update is conditional
 * on it, also when racing the original. The row it moved is required: without it the transaction is refused.
 */
function* counterMoved(passkeyId: string, newCounter: number, now: Date): TransactionScript<void> {
  // An authenticator without a counter always says 0: accepted while the stored counter is 0 too.
  const moves = newCounter > 0 ? `"counter" < ?` : `"counter" = ?`;
  yield* required(
    () => new PasskeyError(`The passkey assertion was rejected: its signature counter ${newCounter} did not increase`, 401),
    `UPDATE "Passkey" SET "counter" = ?, "lastUsedAt" = ? WHERE "id" = ? AND ${moves} RETURNING "id"`,
    newCounter,
    now,
    passkeyId,
    newCounter,
  );
}

/** Verifies an assertion (checkAssertion) and moves its passkey's counter. */
export async function verifyAssertion(response: AuthenticationResponseJSON, purpose: ChallengePurpose, clock: Clock = systemClock) {
  const { counterMoved: moveCounter, ...assertion } = await checkAssertion(response, purpose, clock);
  await runTransaction(moveCounter);
  return assertion;
}

/** Sign-in: a discoverable passkey names its user. */
export async function completeSignIn(response: AuthenticationResponseJSON, clock: Clock = systemClock) {
  const { userId, passkeyId } = await verifyAssertion(response, "sign-in", clock);
  const user = await db().user.findUniqueOrThrow({ where: { id: userId } });
  await recordAudit({ type: "user.signed_in", userId, data: { passkey: passkeyId } }, clock);
  return { id: user.id, email: user.email };
}

export async function addPasskeyOptions(userId: string, clock: Clock = systemClock) {
  const user = await db().user.findUniqueOrThrow({ where: { id: userId } });
  return creationOptions(user, "add-passkey", null, clock);
}

export async function completeAddPasskey(
  userId: string,
  response: RegistrationResponseJSON,
  name: string | undefined,
  clock: Clock = systemClock,
) {
  const consumed = await consumeChallenge(challengeOf(response.response.clientDataJSON), "add-passkey", clock);
  if (consumed.userId !== userId) throw new PasskeyError("This passkey challenge was issued to another account");
  const passkey = await verifyCreation(response, consumed);
  const count = await db().passkey.count({ where: { userId } });
  const now = clock();
  const created = await db().passkey.create({
    data: { ...passkey, userId, name: name ? passkeyNameSchema.parse(name) : `Passkey ${count + 1}`, createdAt: now },
  });
  await recordAudit({ type: "passkey.added", userId, data: { passkey: created.id, canSealKeys: created.prfCapable } }, clock);
  return { id: created.id, name: created.name, prfCapable: created.prfCapable };
}

export async function listPasskeys(userId: string) {
  return db().passkey.findMany({
    where: { userId },
    select: { id: true, name: true, createdAt: true, lastUsedAt: true, prfCapable: true },
    orderBy: { createdAt: "asc" },
  });
}

export async function renamePasskey(userId: string, passkeyId: string, name: string, clock: Clock = systemClock) {
  const updated = await db().passkey.updateMany({ where: { id: passkeyId, userId }, data: { name: passkeyNameSchema.parse(name) } });
  if (!updated.count) throw new NotFoundError("The passkey");
  await recordAudit({ type: "passkey.renamed", userId, data: { passkey: passkeyId } }, clock);
}

/**
 * Removes a passkey, never the last one. Keys sealed only under it would become
 * unusable, so those must be re-sealed under another passkey first (the one
 * place this rule lives; the settings page only shows its consequences). Every
 * session signed in before ends: one may have been opened with that passkey.
 */
export async function removePasskey(userId: string, passkeyId: string, clock: Clock = systemClock) {
  await db()
    .$transaction(
      async (tx) => {
        const passkeys = await tx.passkey.findMany({ where: { userId }, select: { id: true } });
        if (!passkeys.some((passkey) => passkey.id === passkeyId)) throw new NotFoundError("The passkey");
        if (passkeys.length === 1) throw new AppError("last_passkey", "You cannot remove your only passkey: add another one first.", 409);
        const orphaned = await tx.credential.findMany({
          where: { userId, kind: "evm", seals: { some: { passkeyId }, every: { passkeyId } } },
          select: { name: true },
        });
        if (orphaned.length) {
          throw new AppError(
            "passkey_holds_keys",
            `Only this passkey can unlock ${orphaned.map((credential) => credential.name).join(", ")}. ` +
              "Unlock them with another passkey first, or remove those wallets.",
            409,
          );
        }
        await tx.credentialSeal.deleteMany({ where: { passkeyId } });
        await tx.passkey.delete({ where: { id: passkeyId } });
        await tx.user.update({ where: { id: userId }, data: { sessionVersion: { increment: 1 } } });
        // Serializable: two removals at once must not both pass the "not the last one" check.
      },
      { isolationLevel: "Serializable" },
    )
    .catch((error: unknown) => {
      if ((error as { code?: string }).code === "P2034")
        throw new AppError("conflict", "Another change to your passkeys happened at the same time. Try again.", 409);
      throw error;
    });
  await recordAudit({ type: "passkey.removed", userId, data: { passkey: passkeyId } }, clock);
}
