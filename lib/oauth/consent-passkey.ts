import { z } from "zod";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { stepUpOptions, verifyStepUp } from "@/lib/auth/step-up";
import { systemClock, type Clock } from "@/lib/clock";
import { readySignedAllowance, sealingPasskeys } from "@/lib/allowances/ceremony";
import { allowanceBinding } from "@/lib/allowances/signing";
import { approveAuthorizationRequest, ConsentRequestError, loadAuthorizationRequest } from "./consent";
import { boundGrantSetSchema, grantSetSchema } from "./grants";

/** What the person decides on the consent screen, as approved: an allowance comes signed. */
export const consentDecisionSchema = z.object({ credentials: grantSetSchema, stayConnected: z.boolean() });
export type ConsentDecision = z.infer<typeof consentDecisionSchema>;
/** The same decision as the passkey approval binds it, before anything is signed. */
export const consentChoiceSchema = z.object({ credentials: boundGrantSetSchema, stayConnected: z.boolean() });
type ConsentChoice = z.infer<typeof consentChoiceSchema>;

/** One encoding per decision, whatever order the page listed the credentials in. */
function normalized(choice: ConsentChoice) {
  const credentials = [...choice.credentials].sort((a, b) => (a.credentialId < b.credentialId ? -1 : 1));
  return { credentials, stayConnected: choice.stayConnected };
}

/** The decision as its passkey approval was bound: each signed allowance by its delegations' hashes. */
function bound(decision: ConsentDecision): ConsentChoice {
  return {
    ...decision,
    credentials: decision.credentials.map(({ allowance, ...entry }) =>
      allowance ? { ...entry, allowance: allowanceBinding(allowance) } : entry,
    ),
  };
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
  const allowance = choice.credentials.find((entry) => entry.allowance);
  const allow = allowance ? await sealingPasskeys(userId, allowance.credentialId) : undefined;
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
  await verifyStepUp(userId, "consent", requestId, normalized(bound(decision)), assertion, clock);
  const entry = decision.credentials.find((candidate) => candidate.allowance);
  const allowance = entry?.allowance ? await readySignedAllowance(userId, entry.credentialId, entry.allowance) : undefined;
  const { location } = await approveAuthorizationRequest(
    { requestId, userId, credentials: decision.credentials, stayConnected: decision.stayConnected, allowance },
    clock,
  );
  return { location };
}
