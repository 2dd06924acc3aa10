import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { passkeyNameSchema } from "@/lib/auth/passkeys";
import { guarded, guardedOptions } from "@/lib/auth/step-up";

export const POST = appRoute(
  z.discriminatedUnion("action", [
    z.object({ action: z.literal("rename"), name: passkeyNameSchema }),
    z.object({ action: z.literal("remove") }),
  ]),
  (input, { user, params }) =>
    guardedOptions(user.id, input.action === "rename" ? guarded.renamePasskey(params.id, input.name) : guarded.removePasskey(params.id)),
);
