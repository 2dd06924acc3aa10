import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { denyAuthorizationRequest } from "@/lib/oauth/consent";

export const POST = appRoute(z.object({}), (_input, { user, params }) =>
  denyAuthorizationRequest({ requestId: params.id, userId: user.id }),
);
