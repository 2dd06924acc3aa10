import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { authenticationResponseSchema } from "@/lib/auth/passkeys";
import { guarded, withStepUp } from "@/lib/auth/step-up";
import { credentialNameSchema, removeCredential, renameCredential } from "@/lib/wallet/credentials";
import { allowancesEndWithWallet } from "@/lib/allowances/stop";

const assertion = authenticationResponseSchema.optional();

export const PATCH = appRoute(z.object({ name: credentialNameSchema, assertion }), ({ name, assertion }, { user, params }) =>
  withStepUp(user.id, guarded.renameWallet(params.id, name), assertion, () => renameCredential(user.id, params.id, name)),
);
export const DELETE = appRoute(z.object({ assertion }), ({ assertion }, { user, params }) =>
  withStepUp(user.id, guarded.removeWallet(params.id), assertion, () => removeCredential(user.id, params.id, [allowancesEndWithWallet])),
);
