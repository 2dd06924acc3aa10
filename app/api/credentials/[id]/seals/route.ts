import { appRoute } from "@/lib/routes/app-route";
import { addSeal, addSealSchema } from "@/lib/wallet/credentials";

export const POST = appRoute(addSealSchema, (input, { user, params }) => addSeal(user.id, params.id, input));
