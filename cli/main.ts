// agent-wallet: the CLI over the typed SDK. Every command speaks only the public
// surface (discovery, registration, authorize, token, /mcp). This file parses the
// command line, runs the command's module (cli/commands/) and maps errors to exit codes.
import { AuthenticationError, InvalidInputError, NetworkError, OAuthError, ServerError, SignInRequiredError, ToolError } from "../sdk";
import { AmountError } from "./amount";
import { commandHelp, mainHelp, parseCommandLine, UsageError, type Command, type ParsedCommandLine } from "./args";
import * as balance from "./commands/balance";
import * as credentials from "./commands/credentials";
import * as login from "./commands/login";
import * as logout from "./commands/logout";
import * as requestCancel from "./commands/request-cancel";
import * as requestGet from "./commands/request-get";
import * as requestWait from "./commands/request-wait";
import * as requests from "./commands/requests";
import * as send from "./commands/send";
import { CliToolError, NotSignedInError, print, RequestNotCompletedError, type Context, type Io, type Run } from "./commands/shared";
import * as signMessage from "./commands/sign-message";
import * as signTypedData from "./commands/sign-typed-data";
import * as whoami from "./commands/whoami";
import { EXIT } from "./exit-codes";
import { requestDetails } from "./format";
import { LoginError } from "./login";

// Typed by the command list in args.ts: a command without a module does not compile.
const RUN: Record<Command["name"], Run> = {
  login: login.run,
  logout: logout.run,
  whoami: whoami.run,
  credentials: credentials.run,
  balance: balance.run,
  "sign-message": signMessage.run,
  "sign-typed-data": signTypedData.run,
  send: send.run,
  "request get": requestGet.run,
  "request wait": requestWait.run,
  "request cancel": requestCancel.run,
  requests: requests.run,
};

/** The exit code and the message for an error (messages say what to do next). */
export function describeError(error: unknown): { code: number; message: string } {
  if (error instanceof UsageError || error instanceof AmountError || error instanceof InvalidInputError)
    return { code: EXIT.usage, message: error.message };
  if (error instanceof NotSignedInError) return { code: EXIT.auth, message: error.message };
  if (error instanceof SignInRequiredError) {
    const revoked = /revoked/i.test(`${error.description ?? ""} ${error.message}`);
    const detail = error.description ? ` (${error.description})` : "";
    return {
      code: EXIT.auth,
      message: revoked
        ? `This client's access was revoked${detail}. Sign in again: agent-wallet login`
        : `Your session has expired and could not be renewed${detail}. Sign in again: agent-wallet login`,
    };
  }
  if (error instanceof AuthenticationError) {
    const detail = error.description ? ` (${error.description})` : "";
    return { code: EXIT.auth, message: `The API key was refused${detail}. Issue a new key on the Clients screen of the app.` };
  }
  if (error instanceof OAuthError || error instanceof LoginError) {
    const denied = error instanceof OAuthError && error.code === "access_denied";
    return { code: EXIT.auth, message: denied ? "Sign-in was denied on the consent screen." : `Sign-in failed: ${error.message}` };
  }
  if (error instanceof RequestNotCompletedError) return { code: EXIT.request, message: error.message };
  if (error instanceof ToolError || error instanceof CliToolError) return { code: EXIT.tool, message: error.message };
  if (error instanceof NetworkError || error instanceof ServerError) return { code: EXIT.network, message: error.message };
  if (error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError")) {
    return { code: EXIT.interrupted, message: "Interrupted" };
  }
  return { code: EXIT.network, message: `Unexpected error: ${error instanceof Error ? error.message : String(error)}` };
}

export async function main(argv: string[], io: Io, signal: AbortSignal = new AbortController().signal): Promise<number> {
  let parsed: ParsedCommandLine;
  const json = argv.includes("--json");
  try {
    parsed = parseCommandLine(argv);
  } catch (error) {
    const usage = error as UsageError;
    io.stderr.write(
      `agent-wallet: ${usage.message}\nRun \`agent-wallet ${usage.command ? `${usage.command.name} ` : ""}--help\` for usage.\n`,
    );
    return EXIT.usage;
  }
  if (parsed.help || !parsed.command) {
    io.stdout(parsed.command ? commandHelp(parsed.command) : mainHelp());
    return EXIT.ok;
  }
  const ctx: Context = { parsed, command: parsed.command, json: parsed.values.json === true, io, signal };
  try {
    return await RUN[ctx.command.name](ctx);
  } catch (error) {
    if (error instanceof RequestNotCompletedError) {
      // The request itself is the result: print it, then say why the exit code is 3.
      print(ctx, error.request, requestDetails(error.request));
    }
    const { code, message } = describeError(error);
    if (json) io.stderr.write(`${JSON.stringify({ error: { exitCode: code, message } })}\n`);
    else io.stderr.write(`agent-wallet: ${message}\n`);
    if (code === EXIT.usage && error instanceof UsageError) io.stderr.write(`Run \`agent-wallet ${ctx.command.name} --help\` for usage.\n`);
    return code;
  }
}
