import { z } from "zod";
import { publicAppRoute } from "@/lib/routes/app-route";
import { signUpOptions } from "@/lib/auth/passkeys";

// Step 1 of sign-up; step 2 is next-auth's passkey provider (lib/auth/session.ts).
export const POST = publicAppRoute(z.object({ email: z.string().max(254) }), ({ email }) => signUpOptions(email), "signUp");
