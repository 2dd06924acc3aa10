import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { rejectRequest } from "@/lib/wallet/approvals";

export const POST = appRoute(z.object({ reason: z.string().max(500).optional() }), ({ reason }, { user, params }) =>
  rejectRequest(user.id, params.id, reason),
);
