import { z } from "zod";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { stepUpOptions, verifyStepUp } from "@/lib/auth/step-up";
import { systemClock, type Clock } from "@/lib/clock";
import { approveAuthorizationRequest, ConsentRequestError, loadAuthorizationRequest } from "./consent";
import { grantSetSchema, type GrantSet } from "./grants";

/** What the person decides on the consent screen. */
export const consentDecisionSchema = z.object({ credentials: grantSetSchema, stayConnected: z.boolean() });
export type ConsentDecision = z.infer<typeof consentDecisionSchema>;

/** One encoding per decision, whatever order the page listed the credentials in. */
function normalized(decision: ConsentDecision) {
  const credentials: GrantSet = [...decision.credentials].sort((a, b) => (a.credentialId < b.credentialId ? -1 : 1));
  return { credentials, stayConnected: decision.stayConnected };
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

/** The passkey challenge for approving exactly this grant set for this request. */
export async function consentOptions(userId: string, requestId: string, decision: ConsentDecision, clock: Clock = systemClock) {
  await assertPending(requestId, clock);
  return stepUpOptions(userId, "consent", requestId, normalized(decision), {}, clock);
}

/** Approves the request once the assertion proves the person chose exactly this. */
export async function approveConsentWithPasskey(
  userId: string,
  requestId: string,
  decision: ConsentDecision,
  assertion: AuthenticationResponseJSON,
  clock: Clock = systemClock,
) {
  await verifyStepUp(userId, "consent", requestId, normalized(decision), assertion, clock);
  const { location } = await approveAuthorizationRequest(
    { requestId, userId, credentials: decision.credentials, stayConnected: decision.stayConnected },
    clock,
  );
  return { location };
}
