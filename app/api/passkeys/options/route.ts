import { z } from "zod";
import { appRoute } from "@/lib/http/app-route";
import { addPasskeyOptions } from "@/lib/auth/passkeys";

export const POST = appRoute(z.object({}), (_input, { user }) => addPasskeyOptions(user.id));
