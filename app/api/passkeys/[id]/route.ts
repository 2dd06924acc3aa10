import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { authenticationResponseSchema, passkeyNameSchema, removePasskey, renamePasskey } from "@/lib/auth/passkeys";
import { keepThisSession } from "@/lib/auth/session";
import { guarded, withStepUp } from "@/lib/auth/step-up";

const assertion = authenticationResponseSchema.optional();

export const PATCH = appRoute(z.object({ name: passkeyNameSchema, assertion }), ({ name, assertion }, { user, params }) =>
  withStepUp(user.id, guarded.renamePasskey(params.id, name), assertion, () => renamePasskey(user.id, params.id, name)),
);

// Removing a passkey ends every other session; this browser's is renewed.
export const DELETE = appRoute(z.object({ assertion }), ({ assertion }, { user, params }) =>
  withStepUp(user.id, guarded.removePasskey(params.id), assertion, async () => {
    await removePasskey(user.id, params.id);
    await keepThisSession(user.id);
  }),
);
