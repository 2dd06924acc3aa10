import { z } from "zod";
import { appRoute } from "@/lib/http/app-route";
import { credentialNameSchema, removeCredential, renameCredential } from "@/lib/wallet/credentials";

export const PATCH = appRoute(z.object({ name: credentialNameSchema }), ({ name }, { user, params }) =>
  renameCredential(user.id, params.id, name),
);
export const DELETE = appRoute(z.object({}), (_input, { user, params }) => removeCredential(user.id, params.id));
