import { appRoute } from "@/lib/routes/app-route";
import { allowanceChoicesSchema, prepareAllowance } from "@/lib/allowances/ceremony";

export const POST = appRoute(allowanceChoicesSchema, (choices, { user }) => prepareAllowance(user.id, choices));
