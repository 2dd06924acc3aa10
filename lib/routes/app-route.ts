import { z } from "zod";
import { config } from "@/lib/config";
import { requireApiUser, requireClaimedSession, type ClaimedSession, type SessionUser } from "@/lib/auth/session";
import { AppError, invalidInput } from "@/lib/http/errors";
import { JsonBodyError, parseJsonBody } from "@/lib/http/input-limits";
import { errorResponse, json, NO_STORE, readBody } from "@/lib/http/respond";
import { clientIp } from "@/lib/limits/client-ip";
import { spendRateLimit } from "@/lib/limits/rate-limit";

const BODY_LIMIT = 256 * 1024;

class CrossSiteError extends AppError {
  constructor() {
    super("cross_site_request", "This request must come from the Agent Wallet app itself", 403);
  }
}

/**
 * State-changing app routes accept only requests from the app's own origin:
 * the Origin header (sent by every current browser on POST/PATCH/DELETE) must
 * be APP_URL, or Sec-Fetch-Site must say same-origin.
 */
function assertSameOrigin(request: Request): void {
  const origin = request.headers.get("origin");
  if (origin !== null) {
    if (origin !== config().appUrl) throw new CrossSiteError();
    return;
  }
  if (request.headers.get("sec-fetch-site") !== "same-origin") throw new CrossSiteError();
}

type Handler<Input, Params> = (input: Input, context: { user: SessionUser; request: Request; params: Params }) => Promise<unknown>;
type PublicHandler<Input> = (input: Input, context: { request: Request }) => Promise<unknown>;

async function parseInput<S extends z.ZodType>(request: Request, schema: S): Promise<z.infer<S>> {
  // a GET (a read) states its input in the query
  let raw: unknown = Object.fromEntries(new URL(request.url).searchParams);
  if (request.method !== "GET") {
    const body = await readBody(request, BODY_LIMIT);
    if (body === null) throw new AppError("body_too_large", `The request body may be at most ${BODY_LIMIT} bytes`, 413);
    try {
      raw = body.trim() ? parseJsonBody(body) : {};
    } catch (error) {
      throw error instanceof JsonBodyError ? new AppError("invalid_json", `The request body must be JSON: ${error.message}`, 400) : error;
    }
  }
  const result = schema.safeParse(raw);
  if (!result.success) throw invalidInput(result.error);
  return result.data;
}

/**
 * A route's result as its answer. Never stored by a cache: answers carry account data, one-time secrets (a new API
 * key) and where the browser goes next (the consent redirect); errors get the same from errorResponse.
 */
function answer(result: unknown): Response {
  return json(result ?? { ok: true }, { headers: NO_STORE });
}

type RouteOptions = { limit?: "approve" | "userCode" | "tokens" };

/**
 * An /api route for the signed-in person: same-origin check, session, the route's rate limit (by address and
 * person) when it names one, zod input, typed errors.
 */
export function appRoute<S extends z.ZodType, Params = Record<string, string>>(
  schema: S,
  handler: Handler<z.infer<S>, Params>,
  options: RouteOptions = {},
) {
  return sessionRoute<S, Params, SessionUser>(
    requireApiUser,
    (user) => user.id,
    schema,
    (input, { session, request, params }) => handler(input, { user: session, request, params }),
    options,
  );
}

/**
 * As appRoute, for a route that confirms the session in its own first round trip: its handler gets the session as
 * the cookie claims it (ClaimedSession) and must confirm it before it acts for the person.
 */
export function claimedSessionRoute<S extends z.ZodType, Params = Record<string, string>>(
  schema: S,
  handler: (input: z.infer<S>, context: { session: ClaimedSession; request: Request; params: Params }) => Promise<unknown>,
  options: RouteOptions = {},
) {
  return sessionRoute(requireClaimedSession, (session) => session.claimedUserId, schema, handler, options);
}

function sessionRoute<S extends z.ZodType, Params, Session>(
  sessionOf: (request: Request) => Promise<Session>,
  personOf: (session: Session) => string,
  schema: S,
  handler: (input: z.infer<S>, context: { session: Session; request: Request; params: Params }) => Promise<unknown>,
  options: RouteOptions,
) {
  return async (request: Request, context: { params: Promise<Params> }) => {
    try {
      if (request.method !== "GET") assertSameOrigin(request);
      const session = await sessionOf(request);
      if (options.limit) await spendRateLimit(options.limit, { ip: clientIp(request.headers), person: personOf(session) });
      const input = await parseInput(request, schema);
      return answer(await handler(input, { session, request, params: await context.params }));
    } catch (error) {
      return errorResponse(error);
    }
  };
}

/** An /api route open to signed-out visitors (the first step of sign-up and sign-in), limited by address. */
export function publicAppRoute<S extends z.ZodType>(schema: S, handler: PublicHandler<z.infer<S>>, limit: "signIn" | "signUp") {
  return async (request: Request) => {
    try {
      assertSameOrigin(request);
      await spendRateLimit(limit, { ip: clientIp(request.headers) });
      const input = await parseInput(request, schema);
      return answer(await handler(input, { request }));
    } catch (error) {
      return errorResponse(error);
    }
  };
}
