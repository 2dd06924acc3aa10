import { appRoute } from "@/lib/routes/app-route";
import { apiKeyOptions, apiKeyRequestSchema } from "@/lib/oauth/api-keys";

export const POST = appRoute(apiKeyRequestSchema, (request, { user }) => apiKeyOptions(user.id, request));
