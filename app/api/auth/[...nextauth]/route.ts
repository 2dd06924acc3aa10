import NextAuth from "next-auth";
import { authOptions } from "@/lib/auth/session";
import { errorResponse } from "@/lib/http/respond";
import { clientIp } from "@/lib/limits/client-ip";
import { spendRateLimit } from "@/lib/limits/rate-limit";

async function handler(request: Request, context: { params: Promise<{ nextauth: string[] }> }) {
  // Completing a passkey sign-in or sign-up is an attempt like the options steps before it: limited by address.
  if (request.method === "POST" && (await context.params).nextauth.join("/") === "callback/passkey") {
    try {
      await spendRateLimit("passkey", { ip: clientIp(request.headers) });
    } catch (error) {
      return errorResponse(error);
    }
  }
  return NextAuth(authOptions())(request, context);
}

export { handler as GET, handler as POST };
