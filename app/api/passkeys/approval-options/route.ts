import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { guarded, guardedOptions } from "@/lib/auth/step-up";

/** Step 0 of adding a passkey: an assertion by a passkey already registered approves it. */
export const POST = appRoute(z.object({}), (_input, { user }) => guardedOptions(user.id, guarded.addPasskey()));
