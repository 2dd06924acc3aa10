import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { guarded, guardedOptions } from "@/lib/auth/step-up";
import { policySchema } from "@/contract";

/** The passkey challenge for exactly this change of spending limits. */
export const POST = appRoute(z.object({ credential_id: z.string().min(1).max(100), policy: policySchema }), (input, { user, params }) =>
  guardedOptions(user.id, guarded.changePolicy({ grantId: params.id, credentialId: input.credential_id, policy: input.policy })),
);
