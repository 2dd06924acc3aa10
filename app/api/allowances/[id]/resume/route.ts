import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { authenticationResponseSchema } from "@/lib/auth/passkeys";
import { guarded, withStepUp } from "@/lib/auth/step-up";
import { resumeAllowanceForUser } from "@/lib/allowances/person";

export const POST = appRoute(z.object({ assertion: authenticationResponseSchema.optional() }), ({ assertion }, { user, params }) =>
  withStepUp(user.id, guarded.resumeAllowance(params.id), assertion, () => resumeAllowanceForUser(user.id, params.id)),
);
