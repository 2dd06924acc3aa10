import { z } from "zod";
import { appRoute } from "@/lib/http/app-route";
import { passkeyNameSchema, removePasskey, renamePasskey } from "@/lib/auth/passkeys";

export const PATCH = appRoute(z.object({ name: passkeyNameSchema }), ({ name }, { user, params }) =>
  renamePasskey(user.id, params.id, name),
);
export const DELETE = appRoute(z.object({}), (_input, { user, params }) => removePasskey(user.id, params.id));
