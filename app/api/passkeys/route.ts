import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { completeAddPasskey, passkeyNameSchema, registrationResponseSchema } from "@/lib/auth/passkeys";

export const POST = appRoute(
  z.object({ response: registrationResponseSchema, name: passkeyNameSchema.optional() }),
  ({ response, name }, { user }) => completeAddPasskey(user.id, response, name),
);
