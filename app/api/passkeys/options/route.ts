import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { addPasskeyOptions, authenticationResponseSchema } from "@/lib/auth/passkeys";
import { guarded, withStepUp } from "@/lib/auth/step-up";

export const POST = appRoute(z.object({ assertion: authenticationResponseSchema.optional() }), ({ assertion }, { user }) =>
  withStepUp(user.id, guarded.addPasskey(), assertion, () => addPasskeyOptions(user.id)),
);
