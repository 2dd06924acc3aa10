import { appRoute } from "@/lib/routes/app-route";
import { apiKeyChoiceSchema, apiKeyOptions } from "@/lib/oauth/api-keys";

export const POST = appRoute(apiKeyChoiceSchema, (request, { user }) => apiKeyOptions(user.id, request));
