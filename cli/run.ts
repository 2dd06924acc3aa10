// Runs a parsed command: its module (cli/commands/), and errors mapped to exit codes. Loaded by cli/main.ts only
// once a command is to run, so `--help` does not load the SDK and its schemas.
import {
  AuthenticationError,
  InvalidInputError,
  NetworkError,
  OAuthError,
  PaymentRefusedError,
  ServerError,
  SignInRequiredError,
  ToolError,
} from "../sdk";
import { AmountError } from "./amount";
import { UsageError, type Command, type ParsedCommandLine } from "./args";
import * as balance from "./commands/balance";
import * as credentials from "./commands/credentials";
import * as login from "./commands/login";
import * as logout from "./commands/logout";
import * as pay from "./commands/pay";
import * as requestCancel from "./commands/request-cancel";
import * as requestGet from "./commands/request-get";
import * as requestWait from "./commands/request-wait";
import * as requests from "./commands/requests";
import * as requestAllowance from "./commands/request-allowance";
import * as send from "./commands/send";
import {
  CliToolError,
  InterruptedError,
  NotSignedInError,
  print,
  RequestNotCompletedError,
  ResourceUnreachableError,
  SIGN_IN_AGAIN,
  withNextStep,
  type Context,
  type Io,
  type Run,
} from "./commands/shared";
import * as signMessage from "./commands/sign-message";
import * as signTypedData from "./commands/sign-typed-data";
import * as status from "./commands/status";
import * as whoami from "./commands/whoami";
import { EXIT } from "./exit-codes";
import { requestDetails } from "./format";
import { LoginError } from "./login";

// Typed by the command list in args.ts: a command without a module does not compile.
const RUN: Record<Command["name"], Run> = {
  login: login.run,
  logout: logout.run,
  status: status.run,
  whoami: whoami.run,
  credentials: credentials.run,
  balance: balance.run,
  "sign-message": signMessage.run,
  "sign-typed-data": signTypedData.run,
  send: send.run,
  pay: pay.run,
  "request-allowance": requestAllowance.run,
  "request get": requestGet.run,
  "request wait": requestWait.run,
  "request cancel": requestCancel.run,
  requests: requests.run,
};

/** The exit code and the message for an error; every message ends with what to do next. */
export function describeError(error: unknown): { code: number; message: string } {
  if (error instanceof UsageError || error instanceof AmountError || error instanceof InvalidInputError)
    return { code: EXIT.usage, message: error.message };
  if (error instanceof NotSignedInError) return { code: EXIT.auth, message: error.message };
  if (error instanceof SignInRequiredError) {
    const revoked = /revoked/i.test(`${error.description ?? ""} ${error.message}`);
    const detail = error.description ? ` (${error.description})` : "";
    return {
      code: EXIT.auth,
      message: withNextStep(
        `${revoked ? "This client's access was revoked" : "Your session has expired and could not be renewed"}${detail}`,
        SIGN_IN_AGAIN,
      ),
    };
  }
  if (error instanceof AuthenticationError) {
    const detail = error.description ? ` (${error.description})` : "";
    return {
      code: EXIT.auth,
      message: withNextStep(`The API key was refused${detail}`, "Issue a new key on the Clients screen of the app."),
    };
  }
  if (error instanceof OAuthError || error instanceof LoginError) {
    const denied = error instanceof OAuthError && error.code === "access_denied";
    const what = denied ? "Sign-in was denied on the consent screen" : `Sign-in failed: ${error.message}`;
    return { code: EXIT.auth, message: withNextStep(what, "Run `agent-wallet login` to try again.") };
  }
  if (error instanceof RequestNotCompletedError) return { code: EXIT.request, message: error.message };
  if (error instanceof ToolError) {
    return { code: EXIT.tool, message: withNextStep(error.message, "Run `agent-wallet status` to see your grant, limits and requests.") };
  }
  if (error instanceof PaymentRefusedError) {
    const next =
      error.reason === "over_max" || error.reason === "no_max"
        ? 'Run again with --max naming the most you mean to pay (e.g. --max "0.50 USDC").'
        : "Check the URL: only a requirement for the URL given is paid.";
    return { code: EXIT.refused, message: withNextStep(error.message, next) };
  }
  if (error instanceof CliToolError) return { code: EXIT.tool, message: error.message };
  if (error instanceof ResourceUnreachableError)
    return { code: EXIT.network, message: withNextStep(error.message, "Check the URL and your connection, then try again.") };
  if (error instanceof InterruptedError) return { code: EXIT.interrupted, message: error.message };
  if (error instanceof NetworkError) {
    const next = "Check the URL (--base-url or $AGENT_WALLET_URL) and your connection, then try again.";
    return { code: EXIT.network, message: withNextStep(error.message, next) };
  }
  if (error instanceof ServerError) return { code: EXIT.network, message: withNextStep(error.message, "Try again in a moment.") };
  if (error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError")) {
    return { code: EXIT.interrupted, message: "Interrupted. Run the command again to continue." };
  }
  const detail = error instanceof Error ? error.message : String(error);
  return {
    code: EXIT.network,
    message: withNextStep(`Unexpected error: ${detail}`, "Try again; if it persists, report it with the command you ran."),
  };
}

/** Runs the command and returns its exit code; a failure is printed (with --json, as JSON on stderr). */
export async function runCommand(parsed: ParsedCommandLine & { command: Command }, io: Io, signal: AbortSignal): Promise<number> {
  const json = parsed.values.json === true;
  const ctx: Context = { parsed, command: parsed.command, json, io, signal };
  try {
    return await RUN[ctx.command.name](ctx);
  } catch (error) {
    if (error instanceof RequestNotCompletedError) {
      // The request itself is the result: print it, then say why the exit code is 3.
      print(ctx, error.request, requestDetails(error.request));
    }
    const { code, message } = describeError(error);
    const usage = code === EXIT.usage ? `Run \`agent-wallet ${ctx.command.name} --help\` for usage.` : null;
    // A tool's own fields for programs (a policy refusal's rule), or why pay refused, beside the words.
    const details =
      error instanceof ToolError ? error.details : error instanceof PaymentRefusedError ? { reason: error.reason } : undefined;
    if (json) {
      const error = { exitCode: code, message: usage ? withNextStep(message, usage) : message, ...(details && { details }) };
      io.stderr.write(`${JSON.stringify({ error })}\n`);
    } else io.stderr.write(`agent-wallet: ${message}\n${usage ? `${usage}\n` : ""}`);
    return code;
  }
}
