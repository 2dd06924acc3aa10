import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { authenticationResponseSchema } from "@/lib/auth/passkeys";
import { guarded, withStepUp } from "@/lib/auth/step-up";
import { giveAllowance, signedAllowanceSchema } from "@/lib/allowances/ceremony";
import { allowanceBinding } from "@/lib/allowances/signing";

/** Gives a granted wallet the allowance the person signed, approved with the passkey bound to exactly it. */
export const POST = appRoute(
  z.object({
    credential_id: z.string().min(1).max(100),
    allowance: signedAllowanceSchema,
    assertion: authenticationResponseSchema.optional(),
  }),
  ({ credential_id: credentialId, allowance, assertion }, { user, params }) => {
    const change = { grantId: params.id, credentialId, allowance };
    const operation = guarded.giveAllowance({ ...change, allowance: allowanceBinding(allowance) }, []);
    return withStepUp(user.id, operation, assertion, () => giveAllowance(user.id, change));
  },
);
