import type { ZodError } from "zod";

/**
 * Every error the service reports on purpose is an HttpError: it carries its
 * status and its body in the protocol's own format. lib/http/respond.ts is the
 * one place that turns errors into responses.
 */
export abstract class HttpError extends Error {
  readonly headers: Record<string, string> = {};

  constructor(
    /** The protocol's error code, e.g. `invalid_grant` or `not_found`. */
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
    this.name = new.target.name;
  }

  abstract toResponseObject(): Record<string, unknown>;
}

/** An error of the first-party app's /api routes: `{error, message}`. */
export class AppError extends HttpError {
  toResponseObject() {
    return { error: this.code, message: this.message };
  }
}

export class NotFoundError extends AppError {
  constructor(what: string) {
    super("not_found", `${what} was not found`, 404);
  }
}

export class UnauthenticatedError extends AppError {
  constructor(message = "Sign in first") {
    super("unauthenticated", message, 401);
  }
}

/** What an /api route answers when something failed that nobody anticipated: the same shape, nothing internal. */
export class UnexpectedError extends AppError {
  constructor() {
    super("server_error", "The server could not complete the request", 500);
  }
}

/** Seconds a client is told to wait (Retry-After) while the database cannot be reached. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** What an /api route answers while the database cannot be reached. */
export class ServiceUnavailableError extends AppError {
  readonly headers = { "Retry-After": String(UNAVAILABLE_RETRY_AFTER_SECONDS) };

  constructor() {
    super("service_unavailable", "The service cannot reach its database right now; try again in a few seconds", 503);
  }
}

/**
 * A rate limit was spent (lib/limits): 429 with Retry-After. This is the /api form `{error, message}`; the OAuth
 * endpoints and /mcp answer it in their own formats (lib/oauth/errors.ts, lib/mcp/handler.ts).
 */
export class RateLimitedError extends AppError {
  constructor(readonly retryAfterSeconds: number) {
    super("rate_limited", `Too many requests; try again in ${retryAfterSeconds} s`, 429);
    this.headers["Retry-After"] = String(retryAfterSeconds);
  }
}

// Prisma's "can't reach / timed out / closed" codes, the socket errors of a database that went away, and
// PostgreSQL's shutdown and starting-up states.
const UNAVAILABLE_CODES = new Set(["P1001", "P1002", "P1017", "P2024", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "57P01", "57P03"]);

/** Whether an error means the database is unreachable for now (a retry later may work), not a bug. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === "object" && depth < 5; depth++) {
    const { code, message, cause } = current as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof code === "string" && UNAVAILABLE_CODES.has(code)) return true;
    if (typeof message === "string" && /Connection terminated|ECONNREFUSED|Can't reach database server|connect ECONN/.test(message))
      return true;
    current = cause;
  }
  return false;
}

/** Input that failed its zod schema, named by the first offending field. */
export function invalidInput(error: ZodError): AppError {
  const issue = error.issues[0];
  return new AppError("invalid_input", issue.path.length ? `${issue.path.join(".")}: ${issue.message}` : issue.message, 400);
}
