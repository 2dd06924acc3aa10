import NextAuth from "next-auth";
import { authOptions } from "@/lib/auth/session";
import { errorResponse, NO_STORE, withHeaders } from "@/lib/http/respond";
import { clientIp } from "@/lib/limits/client-ip";
import { spendRateLimit } from "@/lib/limits/rate-limit";

async function handler(request: Request, context: { params: Promise<{ nextauth: string[] }> }) {
  try {
    // Completing a passkey sign-in or sign-up is an attempt like the options steps before it: limited by address.
    if (request.method === "POST" && (await context.params).nextauth.join("/") === "callback/passkey") {
      await spendRateLimit("passkey", { ip: clientIp(request.headers) });
    }
    // next-auth's answers (the session, a CSRF token, sign-in results) are the person's: no cache keeps them.
    return withHeaders(await NextAuth(authOptions())(request, context), NO_STORE);
  } catch (error) {
    // A body next-auth cannot read throws: answered like every other /api error.
    return errorResponse(error);
  }
}

export { handler as GET, handler as POST };
