import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { authenticationResponseSchema } from "@/lib/auth/passkeys";
import { revokeAllowanceForUser } from "@/lib/allowances/person";
import { signatureSchema } from "@/lib/wallet/approvals";

export const POST = appRoute(
  z.object({
    assertion: authenticationResponseSchema,
    // absent for an allowance whose revocation is stored: nothing is signed now
    nonce: z
      .string()
      .regex(/^\d{1,78}$/)
      .optional(),
    signature: signatureSchema.optional(),
  }),
  ({ assertion, nonce, signature }, { user, params }) => revokeAllowanceForUser(user.id, params.id, { assertion, nonce, signature }),
);
