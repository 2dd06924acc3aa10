import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { allowanceBindingSchema } from "@/lib/allowances/ceremony";
import { askedAllowanceOptions } from "@/lib/allowances/asked";

/** The passkey challenge for exactly the delegations the page is about to sign for the agent's request. */
export const POST = appRoute(z.object({ allowance: allowanceBindingSchema }), ({ allowance }, { user, params }) =>
  askedAllowanceOptions(user.id, params.id, allowance),
);
