import { authenticationResponseSchema } from "@/lib/auth/passkeys";
import { appRoute } from "@/lib/routes/app-route";
import { approveRequest, decisionSchema, signatureSchema } from "@/lib/wallet/approvals";

export const POST = appRoute(
  decisionSchema.extend({ assertion: authenticationResponseSchema, signature: signatureSchema }),
  (input, { user, params }) => approveRequest(user.id, params.id, input),
  { limit: "approve" },
);
