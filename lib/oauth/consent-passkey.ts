import { z } from "zod";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { stepUpOptions, verifyStepUp } from "@/lib/auth/step-up";
import { systemClock, type Clock } from "@/lib/clock";
import { approveAuthorizationRequest, ConsentRequestError, loadAuthorizationRequest } from "./consent";
import {
  boundGrantSet,
  boundGrantSetSchema,
  grantSetApprovers,
  grantSetSchema,
  normalizedGrantSet,
  readyGrantSetAllowance,
} from "./grants";

/** What the person decides on the consent screen, as approved: an allowance comes signed. */
export const consentDecisionSchema = z.object({ credentials: grantSetSchema, stayConnected: z.boolean() });
export type ConsentDecision = z.infer<typeof consentDecisionSchema>;
/** The same decision as the passkey approval binds it, before anything is signed. */
export const consentChoiceSchema = z.object({ credentials: boundGrantSetSchema, stayConnected: z.boolean() });
type ConsentChoice = z.infer<typeof consentChoiceSchema>;

function normalized(choice: ConsentChoice) {
  return { credentials: normalizedGrantSet(choice.credentials), stayConnected: choice.stayConnected };
}

async function assertPending(requestId: string, clock: Clock) {
  const request = await loadAuthorizationRequest(requestId, clock);
  const problems: Record<string, [string, string, number]> = {
    approved: ["request_decided", "This authorization request was already approved.", 409],
    denied: ["request_decided", "This authorization request was already denied.", 409],
    expired: ["request_expired", "This authorization request expired. Start again from the application.", 410],
    client_revoked: ["client_revoked", "This application's access was revoked.", 409],
  };
  const problem = problems[request.status];
  if (problem) throw new ConsentRequestError(...problem);
}

/**
 * The passkey challenge for approving exactly this grant set for this request. With an allowance, only a passkey that
 * sealed that wallet's key may answer: the same tap unseals the key that signs the allowance.
 */
export async function consentOptions(userId: string, requestId: string, choice: ConsentChoice, clock: Clock = systemClock) {
  await assertPending(requestId, clock);
  const allow = await grantSetApprovers(userId, choice.credentials);
  return stepUpOptions(userId, "consent", requestId, normalized(choice), { allow }, clock);
}

/**
 * Approves the request once the assertion proves the person chose exactly this. An allowance is checked and its
 * account given the DeleGator's code first; the grant and the allowance are then stored in one transaction, so a
 * failed relay leaves the request undecided and nothing granted.
 */
export async function approveConsentWithPasskey(
  userId: string,
  requestId: string,
  decision: ConsentDecision,
  assertion: AuthenticationResponseJSON,
  clock: Clock = systemClock,
) {
  const bound = { credentials: boundGrantSet(decision.credentials), stayConnected: decision.stayConnected };
  await verifyStepUp(userId, "consent", requestId, normalized(bound), assertion, clock);
  const allowance = await readyGrantSetAllowance(userId, decision.credentials);
  const { location } = await approveAuthorizationRequest(
    { requestId, userId, credentials: decision.credentials, stayConnected: decision.stayConnected, allowance },
    clock,
  );
  return { location };
}
