import { z } from "zod";
import { publicAppRoute } from "@/lib/routes/app-route";
import { assertionOptions } from "@/lib/auth/passkeys";

// Step 1 of sign-in; step 2 is next-auth's passkey provider (lib/auth/session.ts).
export const POST = publicAppRoute(z.object({}), () => assertionOptions("sign-in"), "signIn");
