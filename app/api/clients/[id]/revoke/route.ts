import { z } from "zod";
import { appRoute } from "@/lib/http/app-route";
import { revokeForUser } from "@/lib/oauth/connected-clients";

export const POST = appRoute(z.object({}), (_input, { user, params }) => revokeForUser(user.id, params.id));
