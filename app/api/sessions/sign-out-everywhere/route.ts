import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { signOutEverywhere } from "@/lib/auth/session";

export const POST = appRoute(z.object({}), (_input, { user }) => signOutEverywhere(user.id));
