import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { getServerSession } from "next-auth";
import { redirect } from "next/navigation";
import { config } from "@/lib/config";
import { db } from "@/lib/db";
import { UnauthenticatedError } from "@/lib/http/errors";
import { authenticationResponseSchema, completeSignIn, completeSignUp, registrationResponseSchema } from "./passkeys";

export const SESSION_MAX_AGE_SECONDS = 12 * 3600;

/**
 * next-auth holds the session (a signed, encrypted JWT cookie). The one
 * provider, "passkey", signs a person in by verifying a WebAuthn ceremony:
 * a registration at sign-up, an assertion at sign-in.
 */
export function authOptions(): NextAuthOptions {
  return {
    secret: config().sessionSecret,
    session: { strategy: "jwt", maxAge: SESSION_MAX_AGE_SECONDS },
    pages: { signIn: "/" },
    providers: [
      CredentialsProvider({
        id: "passkey",
        name: "Passkey",
        credentials: { mode: { type: "text" }, response: { type: "text" } },
        async authorize(credentials) {
          try {
            const response = JSON.parse(credentials?.response ?? "null") as unknown;
            if (credentials?.mode === "sign-up") return await completeSignUp(registrationResponseSchema.parse(response));
            if (credentials?.mode === "sign-in") return await completeSignIn(authenticationResponseSchema.parse(response));
          } catch (error) {
            // next-auth reports the message to the page as ?error=…
            throw new Error(error instanceof Error ? error.message : "Sign-in failed");
          }
          return null;
        },
      }),
    ],
    callbacks: {
      jwt({ token, user }) {
        if (user) token.sub = user.id;
        return token;
      },
      session({ session, token }) {
        return { ...session, user: { ...session.user, id: token.sub, email: token.email } };
      },
    },
  };
}

export type SessionUser = { id: string; email: string };

/** The signed-in person, or null. The user row must still exist. */
export async function currentUser(): Promise<SessionUser | null> {
  const session = await getServerSession(authOptions());
  const id = (session?.user as { id?: string } | undefined)?.id;
  if (!id) return null;
  return db().user.findUnique({ where: { id }, select: { id: true, email: true } });
}

/** For pages: the signed-in person, or a redirect to sign in and back to `path`. */
export async function requireUser(path: string): Promise<SessionUser> {
  const user = await currentUser();
  if (!user) redirect(`/?next=${encodeURIComponent(path)}`);
  return user;
}

/** For /api routes: the signed-in person, or a 401. */
export async function requireApiUser(): Promise<SessionUser> {
  const user = await currentUser();
  if (!user) throw new UnauthenticatedError();
  return user;
}
