import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { guarded, guardedOptions } from "@/lib/auth/step-up";

/** The passkey challenge for resuming this suspended allowance. */
export const POST = appRoute(z.object({}), (_input, { user, params }) => guardedOptions(user.id, guarded.resumeAllowance(params.id)));
