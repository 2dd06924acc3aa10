import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { db } from "@/lib/db";
import { recordAudit } from "@/lib/audit";
import { canonicalJson } from "@/lib/crypto";
import { systemClock, type Clock } from "@/lib/clock";
import { AppError } from "@/lib/http/errors";
import type { ChallengePurpose } from "./challenges";
import { runTransaction, type Query } from "@/lib/db/transaction-script";
import { assertionOptions, checkAssertion, presentedAssertion, type CheckedAssertion } from "./passkeys";

/**
 * Passkey step-up for one exact decision: the challenge is bound to the user,
 * to what is decided (`subject`, e.g. a consent request) and to the decision's
 * content (`decision`, e.g. the grant set). An assertion made for one decision
 * cannot approve another, nor the same request with different content.
 */
export async function stepUpOptions(
  userId: string,
  purpose: ChallengePurpose,
  subject: string,
  decision: unknown,
  options: { allow?: string[] } = {},
  clock: Clock = systemClock,
) {
  const allow = options.allow ?? (await db().passkey.findMany({ where: { userId }, select: { id: true } })).map((passkey) => passkey.id);
  return assertionOptions(purpose, { userId, subject, data: canonicalJson(decision), allow }, clock);
}

class StepUpMismatchError extends AppError {
  constructor() {
    super("step_up_mismatch", "The passkey approval was made for something else. Approve again.", 403);
  }
}

/**
 * A step-up assertion whose challenge is spent, with `reads` read in the same round trip (presentedAssertion):
 * `checkedFor` checks it (checkStepUp) once the caller knows the decision, from what it read.
 */
export async function presentedStepUp(assertion: AuthenticationResponseJSON, purpose: ChallengePurpose, reads: Query[], clock: Clock) {
  const presented = await presentedAssertion(assertion, purpose, reads, clock);
  return {
    rows: presented.rows,
    checkedFor: async (userId: string, subject: string, decision: unknown) =>
      checkedFor(await presented.checked(), userId, subject, decision),
  };
}

/**
 * Checks a step-up assertion for exactly this user, subject and decision (checkAssertion); the passkey's counter is
 * the caller's to move, in the transaction of the decision. A refusal here has moved it already.
 */
async function checkStepUp(
  userId: string,
  purpose: ChallengePurpose,
  subject: string,
  decision: unknown,
  assertion: AuthenticationResponseJSON,
  clock: Clock = systemClock,
): Promise<CheckedAssertion> {
  return checkedFor(await checkAssertion(assertion, purpose, clock), userId, subject, decision);
}

/** checkStepUp's own checks, on an assertion checkAssertion has checked: this user, subject and decision. */
async function checkedFor(checked: CheckedAssertion, userId: string, subject: string, decision: unknown): Promise<CheckedAssertion> {
  const { userId: owner, challenge } = checked;
  let refusal: AppError | null = null;
  if (owner !== userId || challenge.userId !== userId)
    refusal = new AppError("passkey_rejected", "This passkey belongs to another account", 401);
  else if (challenge.subject !== subject || challenge.data !== canonicalJson(decision)) refusal = new StepUpMismatchError();
  if (refusal) {
    await runTransaction(checked.counterMoved);
    throw refusal;
  }
  return checked;
}

/** Verifies a step-up assertion for exactly this user, subject and decision, and moves its passkey's counter. */
export async function verifyStepUp(
  userId: string,
  purpose: ChallengePurpose,
  subject: string,
  decision: unknown,
  assertion: AuthenticationResponseJSON,
  clock: Clock = systemClock,
): Promise<{ passkeyId: string }> {
  const { passkeyId, counterMoved } = await checkStepUp(userId, purpose, subject, decision, assertion, clock);
  await runTransaction(counterMoved);
  return { passkeyId };
}

/** An account operation a stolen session alone must not perform: what it is, what it acts on, its content. */
export type GuardedOperation = { purpose: ChallengePurpose; subject: string; decision: unknown; label: string; allow?: string[] };

/** Every guarded operation, defined once: the routes' options and the operation itself use the same binding. */
export const guarded = {
  addPasskey: (): GuardedOperation => ({ purpose: "approve-add-passkey", subject: "passkeys", decision: null, label: "Adding a passkey" }),
  renamePasskey: (passkeyId: string, name: string): GuardedOperation => ({
    purpose: "rename-passkey",
    subject: passkeyId,
    decision: { name },
    label: "Renaming a passkey",
  }),
  removePasskey: (passkeyId: string): GuardedOperation => ({
    purpose: "remove-passkey",
    subject: passkeyId,
    decision: null,
    label: "Removing a passkey",
  }),
  removeWallet: (credentialId: string): GuardedOperation => ({
    purpose: "remove-wallet",
    subject: credentialId,
    decision: null,
    label: "Removing a wallet",
  }),
  /** Bound to the new name: wallet names appear in approval headlines. */
  renameWallet: (credentialId: string, name: string): GuardedOperation => ({
    purpose: "rename-wallet",
    subject: credentialId,
    decision: { name },
    label: "Renaming a wallet",
  }),
  /** With an allowance in the grant set, bound to its delegations' hashes and answerable only by `allow`, as giveAllowance. */
  issueApiKey: (key: { name: string; credentials: unknown }, allow?: string[]): GuardedOperation => ({
    purpose: "api-key",
    subject: "api-key",
    decision: key,
    allow,
    label: "Issuing an API key",
  }),
  /** Only `passkeyId`, the passkey the key is sealed under, may answer (its PRF output seals the key). */
  sealWallet: (credentialId: string, passkeyId: string): GuardedOperation => ({
    purpose: "seal",
    subject: credentialId,
    decision: { passkeyId },
    allow: [passkeyId],
    label: "Adding or replacing a seal",
  }),
  changePolicy: (change: { grantId: string; credentialId: string; policy: unknown }): GuardedOperation => ({
    purpose: "change-policy",
    subject: `${change.grantId}:${change.credentialId}`,
    decision: change.policy,
    label: "Changing spending limits",
  }),
  /**
   * Bound to the allowance's delegations (their hashes); only `allow`, the passkeys that sealed the wallet's key, may
   * answer: the same tap unseals the key that signs it.
   */
  giveAllowance: (change: { grantId: string; credentialId: string; allowance: unknown }, allow: string[]): GuardedOperation => ({
    purpose: "give-allowance",
    subject: `${change.grantId}:${change.credentialId}`,
    decision: change.allowance,
    allow,
    label: "Giving an allowance",
  }),
  /**
   * The allowance an agent asked for (request_allowance), bound to its request and delegations' hashes; only `allow`,
   * the passkeys that sealed the wallet's key, may answer.
   */
  giveAskedAllowance: (requestId: string, allowance: unknown, allow: string[]): GuardedOperation => ({
    purpose: "give-allowance",
    subject: `request:${requestId}`,
    decision: allowance,
    allow,
    label: "Giving the allowance an agent asked for",
  }),
  /** `label` null: removing the address from the book. */
  changeContact: (address: string, label: string | null): GuardedOperation => ({
    purpose: "address-book",
    subject: address,
    decision: { label },
    label: label === null ? "Removing a name from the address book" : "Naming an address",
  }),
  /** Lets a suspended allowance pay again with no tap. */
  resumeAllowance: (allowanceId: string): GuardedOperation => ({
    purpose: "resume-allowance",
    subject: allowanceId,
    decision: null,
    label: "Resuming an allowance",
  }),
  /** Sends back to the person what an allowance's agent account holds free, the allowance going on (its float). */
  returnAgentAccount: (allowanceId: string): GuardedOperation => ({
    purpose: "return-agent-account",
    subject: allowanceId,
    decision: null,
    label: "Returning what the agent's account holds",
  }),
  revokeClient: (clientId: string): GuardedOperation => ({
    purpose: "revoke-client",
    subject: clientId,
    decision: null,
    label: "Revoking a client",
  }),
};

/** The assertion options for one guarded operation. */
export function guardedOptions(userId: string, operation: GuardedOperation, clock: Clock = systemClock) {
  return stepUpOptions(userId, operation.purpose, operation.subject, operation.decision, { allow: operation.allow }, clock);
}

class StepUpRefusedError extends AppError {
  constructor(operation: { label: string }, reason: string) {
    super("step_up_required", `${operation.label} needs a fresh approval with one of your passkeys. ${reason}`, 403);
  }
}

/**
 * Verifies the step-up for `operation` or refuses with 403 (and an audit event
 * naming the operation, never the assertion). Without an assertion, or with one
 * made for another operation, subject or content, nothing is changed.
 */
export async function requireStepUp(
  userId: string,
  operation: GuardedOperation,
  assertion: AuthenticationResponseJSON | undefined,
  clock: Clock = systemClock,
): Promise<{ passkeyId: string }> {
  try {
    if (!assertion) throw new StepUpRefusedError(operation, "No passkey approval was sent.");
    return await verifyStepUp(userId, operation.purpose, operation.subject, operation.decision, assertion, clock);
  } catch (error) {
    if (!(error instanceof AppError) || error.status >= 500) throw error;
    await recordAudit(
      { type: "step_up.refused", userId, data: { operation: operation.purpose, subject: operation.subject, reason: error.code } },
      clock,
    );
    throw error instanceof StepUpRefusedError ? error : new StepUpRefusedError(operation, error.message);
  }
}

/** Runs `act` only after the step-up for `operation` was verified. */
export async function withStepUp<T>(
  userId: string,
  operation: GuardedOperation,
  assertion: AuthenticationResponseJSON | undefined,
  act: () => Promise<T>,
  clock: Clock = systemClock,
): Promise<T> {
  await requireStepUp(userId, operation, assertion, clock);
  return act();
}
