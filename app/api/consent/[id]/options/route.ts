import { appRoute } from "@/lib/routes/app-route";
import { consentDecisionSchema, consentOptions } from "@/lib/oauth/consent-passkey";

export const POST = appRoute(consentDecisionSchema, (decision, { user, params }) => consentOptions(user.id, params.id, decision));
