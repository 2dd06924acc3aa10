import { appRoute } from "@/lib/routes/app-route";
import { connectCredential, connectCredentialSchema } from "@/lib/wallet/credentials";

export const POST = appRoute(connectCredentialSchema, (input, { user }) => connectCredential(user.id, input));
