import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { allowanceRevocationOptions } from "@/lib/allowances/person";

/** The passkey challenge for revoking this allowance, and the revocation the browser signs with the unsealed key. */
export const POST = appRoute(z.object({}), (_input, { user, params }) => allowanceRevocationOptions(user.id, params.id));
