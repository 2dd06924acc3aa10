import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { resealOptions } from "@/lib/wallet/credentials";

export const POST = appRoute(z.object({ passkeyId: z.string().min(1).max(1024) }), ({ passkeyId }, { user, params }) =>
  resealOptions(user.id, params.id, passkeyId),
);
