import { authenticationResponseSchema } from "@/lib/auth/passkeys";
import { appRoute } from "@/lib/routes/app-route";
import { apiKeyRequestSchema, issueApiKey } from "@/lib/oauth/api-keys";

export const POST = appRoute(
  apiKeyRequestSchema.extend({ assertion: authenticationResponseSchema.optional() }),
  ({ assertion, ...request }, { user }) => issueApiKey(user.id, request, assertion),
);
