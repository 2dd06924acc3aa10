import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { authenticationResponseSchema } from "@/lib/auth/passkeys";
import { guarded, withStepUp } from "@/lib/auth/step-up";
import { returnAgentAccountForUser } from "@/lib/allowances/person";

export const POST = appRoute(z.object({ assertion: authenticationResponseSchema.optional() }), ({ assertion }, { user, params }) =>
  withStepUp(user.id, guarded.returnAgentAccount(params.id), assertion, () => returnAgentAccountForUser(user.id, params.id)),
);
