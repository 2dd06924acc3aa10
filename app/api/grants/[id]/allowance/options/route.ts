import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { guarded, guardedOptions } from "@/lib/auth/step-up";
import { allowanceBindingSchema, sealingPasskeys } from "@/lib/allowances/ceremony";

/** The passkey challenge for exactly this allowance (its delegations' hashes), answerable by a passkey that sealed the key. */
export const POST = appRoute(
  z.object({ credential_id: z.string().min(1).max(100), allowance: allowanceBindingSchema }),
  async ({ credential_id: credentialId, allowance }, { user, params }) =>
    guardedOptions(
      user.id,
      guarded.giveAllowance({ grantId: params.id, credentialId, allowance }, await sealingPasskeys(user.id, credentialId)),
    ),
);
