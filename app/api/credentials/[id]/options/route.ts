import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { guarded, guardedOptions } from "@/lib/auth/step-up";
import { credentialNameSchema } from "@/lib/wallet/credentials";

/** The passkey challenge for renaming this wallet to exactly `name`, or for removing it. */
export const POST = appRoute(
  z.discriminatedUnion("action", [
    z.object({ action: z.literal("rename"), name: credentialNameSchema }),
    z.object({ action: z.literal("remove") }),
  ]),
  (input, { user, params }) =>
    guardedOptions(user.id, input.action === "rename" ? guarded.renameWallet(params.id, input.name) : guarded.removeWallet(params.id)),
);
