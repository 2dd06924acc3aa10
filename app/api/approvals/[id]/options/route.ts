import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { approvalOptions } from "@/lib/wallet/approvals";

export const POST = appRoute(z.object({}), (_input, { user, params }) => approvalOptions(user.id, params.id));
