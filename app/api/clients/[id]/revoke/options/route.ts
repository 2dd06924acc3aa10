import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { clientRevocationOptions } from "@/lib/allowances/person";

/** The passkey challenge for revoking this client, and the disabling of its allowances to sign in the same tap. */
export const POST = appRoute(z.object({}), (_input, { user, params }) => clientRevocationOptions(user.id, params.id));
