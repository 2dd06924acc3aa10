import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { prepareAskedAllowance } from "@/lib/allowances/asked";

/** The delegations to the agent's address that the person's page decodes, states and signs for an agent's request. */
export const POST = appRoute(z.object({}), (_input, { user, params }) => prepareAskedAllowance(user.id, params.id));
