import { appRoute } from "@/lib/routes/app-route";
import { consentChoiceSchema, consentOptions } from "@/lib/oauth/consent-passkey";

export const POST = appRoute(consentChoiceSchema, (decision, { user, params }) => consentOptions(user.id, params.id, decision));
