/**
 * Every error the service reports on purpose is an HttpError: it carries its
 * status and its body in the protocol's own format. lib/http/respond.ts is the
 * one place that turns errors into responses.
 */
export abstract class HttpError extends Error {
  abstract readonly status: number;
  readonly headers: Record<string, string> = {};
  abstract toResponseObject(): Record<string, unknown>;
}

/** An error of the first-party app's /api routes: `{error, message}`. */
export class AppError extends HttpError {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
    this.name = "AppError";
  }

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
