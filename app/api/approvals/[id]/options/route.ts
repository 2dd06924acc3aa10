import { appRoute } from "@/lib/routes/app-route";
import { approvalOptions, decisionSchema } from "@/lib/wallet/approvals";

export const POST = appRoute(decisionSchema, (decision, { user, params }) => approvalOptions(user.id, params.id, decision));
