import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { authenticationResponseSchema } from "@/lib/auth/passkeys";
import { revokeClientForUser } from "@/lib/oauth/connected-clients";
import { signatureSchema } from "@/lib/wallet/approvals";

export const POST = appRoute(
  z.object({
    assertion: authenticationResponseSchema.optional(),
    // the disabling of its allowances, signed in the same ceremony
    revocations: z
      .array(
        z.object({
          allowanceIds: z.array(z.string().min(1).max(100)).min(1).max(50),
          nonce: z.string().regex(/^\d{1,78}$/),
          signature: signatureSchema,
        }),
      )
      .max(20)
      .default([]),
  }),
  ({ assertion, revocations }, { user, params }) => revokeClientForUser(user.id, params.id, { assertion, revocations }),
);
