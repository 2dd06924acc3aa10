import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { guarded, guardedOptions } from "@/lib/auth/step-up";

/** The passkey challenge for removing this wallet. */
export const POST = appRoute(z.object({}), (_input, { user, params }) => guardedOptions(user.id, guarded.removeWallet(params.id)));
