import { hkdfSync } from "node:crypto";
import { jwtDecrypt, type JWTPayload } from "jose";
import { LRUCache } from "lru-cache";
import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { decode, encode } from "next-auth/jwt";
import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { recordAudit } from "@/lib/audit";
import { systemClock, type Clock } from "@/lib/clock";
import { config } from "@/lib/config";
import { db, selectRows } from "@/lib/db";
import { PreparedSelect } from "@/lib/db/prepared";
import { reading, type Query } from "@/lib/db/transaction-script";
import { UnauthenticatedError } from "@/lib/http/errors";
import { parseJsonBody } from "@/lib/http/input-limits";
import { authenticationResponseSchema, completeSignIn, completeSignUp, registrationResponseSchema } from "./passkeys";

/** A session lasts 12 hours from sign-in, whatever the activity (docs/product.md §3). */
const SESSION_MAX_AGE_SECONDS = 12 * 3600;

/**
 * next-auth holds the session (a signed, encrypted JWT cookie). The one
 * provider, "passkey", signs a person in by verifying a WebAuthn ceremony:
 * a registration at sign-up, an assertion at sign-in. The token carries the
 * user's sessionVersion at sign-in; a session whose version is no longer the
 * user's is over (signing out, removing a passkey, "Sign out everywhere").
 */
export function authOptions(): NextAuthOptions {
  return {
    secret: config().sessionSecret,
    session: { strategy: "jwt", maxAge: SESSION_MAX_AGE_SECONDS },
    cookies: {
      sessionToken: { name: sessionCookie().name, options: { httpOnly: true, sameSite: "lax", path: "/", secure: sessionCookie().secure } },
    },
    pages: { signIn: "/" },
    providers: [
      CredentialsProvider({
        id: "passkey",
        name: "Passkey",
        credentials: { mode: { type: "text" }, response: { type: "text" } },
        async authorize(credentials) {
          try {
            const response = parseJsonBody(credentials?.response ?? "null");
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
      async jwt({ token, user }) {
        if (user) {
          token.sub = user.id;
          token.sessionVersion = (await db().user.findUniqueOrThrow({ where: { id: user.id } })).sessionVersion;
          token.signedInAt = Math.floor(Date.now() / 1000);
        }
        return token;
      },
      session({ session, token }) {
        const { sessionVersion, signedInAt } = token;
        return { ...session, user: { ...session.user, id: token.sub, email: token.email, sessionVersion, signedInAt } };
      },
    },
    events: {
      // Signing out ends the account's other sessions too: a copied cookie dies with the one signed out.
      async signOut({ token }) {
        if (token?.sub) await bumpSessionVersion(token.sub);
      },
    },
  };
}

export type SessionUser = { id: string; email: string };

const SESSION_USER = new PreparedSelect<{ id: string; email: string; sessionVersion: number }>(
  "session_user",
  `SELECT "id", "email", "sessionVersion" FROM "User" WHERE "id" = ?`,
);

/**
 * A session as its cookie claims it: decrypted with the app's key and younger than its lifetime, not yet checked
 * against its user's row. `confirmed` judges the row `read` found: the user must still exist and the session's version
 * be the user's current one. A caller with a round trip of its own to make runs `read` in it (one round trip fewer on
 * PostgreSQL): what it does in that round trip must be harmless for a session that turns out to be over.
 */
export class ClaimedSession {
  constructor(
    /** the person the cookie names, who may have ended this session since */
    readonly claimedUserId: string,
    private readonly version: number | undefined,
  ) {}

  get read(): Query {
    return reading(SESSION_USER.sql, this.claimedUserId);
  }

  /** The signed-in person, given the rows `read` found, or null when the session is over. */
  userOf(rows: unknown[]): SessionUser | null {
    const [user] = rows as (typeof SESSION_USER.row)[];
    if (!user || user.sessionVersion !== this.version) return null;
    return { id: user.id, email: user.email };
  }

  /** As userOf, refusing (401) a session that is over. */
  confirmed(rows: unknown[]): SessionUser {
    const user = this.userOf(rows);
    if (!user) throw new UnauthenticatedError();
    return user;
  }
}

/** The session the cookie of `request` (an /api route), else of the page being rendered, claims; null when there is none. */
async function claimedSession(request?: Request): Promise<ClaimedSession | null> {
  const chunks = request ? cookiesOf(request.headers.get("cookie")) : (await cookies()).getAll();
  const token = await sessionToken(chunks);
  const { sub: id, sessionVersion, signedInAt } = (token ?? {}) as { sub?: string; sessionVersion?: number; signedInAt?: number };
  // next-auth moves a JWT session's expiry on each visit to /api/auth/session; the lifetime counts from sign-in.
  if (!id || !signedInAt || Date.now() / 1000 - signedInAt > SESSION_MAX_AGE_SECONDS) return null;
  return new ClaimedSession(id, sessionVersion);
}

/** The signed-in person, or null: the session claimedSession finds, confirmed against its user's row. */
export async function currentUser(request?: Request): Promise<SessionUser | null> {
  const claimed = await claimedSession(request);
  return claimed && claimed.userOf(await selectRows(SESSION_USER, claimed.claimedUserId));
}

type Cookie = { name: string; value: string };

/** The cookies of a Cookie header, as `cookies()` lists them (values URI-decoded when they can be). */
function cookiesOf(header: string | null): Cookie[] {
  const found: Cookie[] = [];
  for (const pair of header?.split(";") ?? []) {
    const at = pair.indexOf("=");
    if (at < 0) continue;
    const value = pair.slice(at + 1).trim();
    try {
      found.push({ name: pair.slice(0, at).trim(), value: decodeURIComponent(value) });
    } catch {
      found.push({ name: pair.slice(0, at).trim(), value });
    }
  }
  return found;
}

/**
 * The session's claims, as next-auth's getServerSession reads them, or null: the cookie (joined from its chunks, as
 * next-auth writes a long one) decrypted with the key next-auth derives from the secret. Derived once per secret:
 * next-auth derives it on every call, and getServerSession also re-encrypts the session it does not send back.
 */
async function sessionToken(chunks: Cookie[]) {
  const { name } = sessionCookie();
  const parts = chunks.filter((cookie) => cookie.name.startsWith(name));
  if (!parts.length) return null;
  const suffix = (cookie: Cookie) => parseInt(cookie.name.split(".").pop() ?? "0");
  const token = parts
    .sort((a, b) => suffix(a) - suffix(b))
    .map((cookie) => cookie.value)
    .join("");
  const { key, decrypted } = sessionKey();
  const known = decrypted.get(token);
  if (known && Date.now() / 1000 < known.exp) return known.payload;
  try {
    const { payload } = await jwtDecrypt(token, key, { clockTolerance: 15 });
    if (typeof payload.exp === "number" && payload.nbf === undefined) decrypted.set(token, { payload, exp: payload.exp });
    return payload;
  } catch {
    return null;
  }
}

let derived: { secret: string; key: Uint8Array; decrypted: LRUCache<string, { payload: JWTPayload; exp: number }> } | undefined;

/**
 * next-auth's encryption key for its JWT sessions (next-auth/jwt's getDerivedEncryptionKey, with no salt), and the
 * cookies it decrypted: each was an AES-GCM job on WebCrypto's thread pool on every request. Only what decrypted is
 * kept, until its exp (the caller still checks the session's lifetime and its version each time); a new secret starts
 * afresh.
 */
function sessionKey() {
  const secret = config().sessionSecret;
  if (derived?.secret !== secret) {
    derived = {
      secret,
      key: new Uint8Array(hkdfSync("sha256", secret, "", "NextAuth.js Generated Encryption Key", 32)),
      decrypted: new LRUCache({ max: 1_000 }),
    };
  }
  return derived;
}

async function bumpSessionVersion(userId: string): Promise<number> {
  const updated = await db().user.update({ where: { id: userId }, data: { sessionVersion: { increment: 1 } } });
  return updated.sessionVersion;
}

/**
 * The cookie the session lives in. On https it is a __Host- cookie: secure, for this host only and the whole
 * path, so no sibling subdomain can set or shadow it.
 */
function sessionCookie() {
  const secure = config().appUrl.startsWith("https://");
  return { name: `${secure ? "__Host-" : ""}next-auth.session-token`, secure };
}

/** "Sign out everywhere": every session of the account ends, this one included. */
export async function signOutEverywhere(userId: string, clock: Clock = systemClock): Promise<void> {
  await bumpSessionVersion(userId);
  await recordAudit({ type: "session.ended_everywhere", userId, data: { reason: "signed out everywhere" } }, clock);
}

/**
 * After a change that ended the account's other sessions (the version was bumped),
 * re-issues this request's session cookie with the new version so that the acting
 * browser stays signed in.
 */
export async function keepThisSession(userId: string): Promise<void> {
  const store = await cookies();
  const { name, secure } = sessionCookie();
  const secret = config().sessionSecret;
  const token = await decode({ token: store.get(name)?.value, secret });
  if (!token || token.sub !== userId) return;
  const { sessionVersion } = await db().user.findUniqueOrThrow({ where: { id: userId }, select: { sessionVersion: true } });
  // The renewed cookie ends when the original would have: renewing never extends a session.
  const maxAge = Math.max(1, Number(token.exp) - Math.floor(Date.now() / 1000));
  const renewed = await encode({ token: { ...token, sessionVersion }, secret, maxAge });
  store.set(name, renewed, { httpOnly: true, sameSite: "lax", path: "/", secure, maxAge });
}

/** For pages: the signed-in person, or a redirect to sign in and back to `path`. */
export async function requireUser(path: string): Promise<SessionUser> {
  const user = await currentUser();
  if (!user) redirect(`/?next=${encodeURIComponent(path)}`);
  return user;
}

/** For /api routes that confirm the session in their own first round trip (ClaimedSession): the claimed one, or a 401. */
export async function requireClaimedSession(request: Request): Promise<ClaimedSession> {
  const claimed = await claimedSession(request);
  if (!claimed) throw new UnauthenticatedError();
  return claimed;
}

/** For /api routes: the signed-in person of `request`, or a 401. */
export async function requireApiUser(request: Request): Promise<SessionUser> {
  const user = await currentUser(request);
  if (!user) throw new UnauthenticatedError();
  return user;
}
