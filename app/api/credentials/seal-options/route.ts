import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { sealingOptions } from "@/lib/wallet/credentials";

export const POST = appRoute(z.object({}), (_input, { user }) => sealingOptions(user.id));
