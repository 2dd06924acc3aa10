import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { authenticationResponseSchema } from "@/lib/auth/passkeys";
import { guarded, withStepUp } from "@/lib/auth/step-up";
import { revokeForUser } from "@/lib/oauth/connected-clients";

export const POST = appRoute(z.object({ assertion: authenticationResponseSchema.optional() }), ({ assertion }, { user, params }) =>
  withStepUp(user.id, guarded.revokeClient(params.id), assertion, () => revokeForUser(user.id, params.id)),
);
