import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { guarded, guardedOptions } from "@/lib/auth/step-up";

/** The passkey challenge for taking back what this allowance's agent account holds (its float). */
export const POST = appRoute(z.object({}), (_input, { user, params }) => guardedOptions(user.id, guarded.returnAgentAccount(params.id)));
