import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { db } from "@/lib/db";
import { canonicalJson } from "@/lib/audit";
import { systemClock, type Clock } from "@/lib/clock";
import { AppError } from "@/lib/http/errors";
import type { ChallengePurpose } from "./challenges";
import { assertionOptions, verifyAssertion } from "./passkeys";

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

export class StepUpMismatchError extends AppError {
  constructor() {
    super("step_up_mismatch", "The passkey approval was made for something else. Approve again.", 400);
  }
}

/** Verifies a step-up assertion for exactly this user, subject and decision. */
export async function verifyStepUp(
  userId: string,
  purpose: ChallengePurpose,
  subject: string,
  decision: unknown,
  assertion: AuthenticationResponseJSON,
  clock: Clock = systemClock,
): Promise<{ passkeyId: string }> {
  const { passkeyId, userId: owner, challenge } = await verifyAssertion(assertion, purpose, clock);
  if (owner !== userId || challenge.userId !== userId) throw new AppError("passkey_rejected", "This passkey belongs to another account", 401);
  if (challenge.subject !== subject || challenge.data !== canonicalJson(decision)) throw new StepUpMismatchError();
  return { passkeyId };
}
