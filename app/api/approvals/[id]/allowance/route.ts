import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { authenticationResponseSchema } from "@/lib/auth/passkeys";
import { signedAllowanceSchema } from "@/lib/allowances/ceremony";
import { approveAskedAllowance } from "@/lib/allowances/asked";

/** Gives the agent the allowance the person signed for its request, approved with the passkey bound to exactly it. */
export const POST = appRoute(
  z.object({ allowance: signedAllowanceSchema, assertion: authenticationResponseSchema.optional() }),
  (input, { user, params }) => approveAskedAllowance(user.id, params.id, input),
);
