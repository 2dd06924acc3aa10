import { authenticationResponseSchema } from "@/lib/auth/passkeys";
import { appRoute } from "@/lib/routes/app-route";
import { approveConsentWithPasskey, consentDecisionSchema } from "@/lib/oauth/consent-passkey";

export const POST = appRoute(
  consentDecisionSchema.extend({ assertion: authenticationResponseSchema }),
  ({ assertion, ...decision }, { user, params }) => approveConsentWithPasskey(user.id, params.id, decision, assertion),
);
