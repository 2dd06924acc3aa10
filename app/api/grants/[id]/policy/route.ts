import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { authenticationResponseSchema } from "@/lib/auth/passkeys";
import { guarded, withStepUp } from "@/lib/auth/step-up";
import { changePolicy } from "@/lib/wallet/policy";
import { policySchema } from "@/contract";

/** Changes one credential's spending limits in this grant, approved with a passkey bound to the new rules. */
export const PUT = appRoute(
  z.object({ credential_id: z.string().min(1).max(100), policy: policySchema, assertion: authenticationResponseSchema.optional() }),
  ({ credential_id: credentialId, policy, assertion }, { user, params }) => {
    const change = { grantId: params.id, credentialId, policy };
    return withStepUp(user.id, guarded.changePolicy(change), assertion, () => changePolicy(user.id, change));
  },
);
