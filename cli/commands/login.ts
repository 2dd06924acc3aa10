// `agent-wallet login`: the browser sign-in (cli/login.ts), then what was stored.
import { secondsOption, UsageError } from "../args";
import { configFile, loadSession } from "../config";
import { EXIT } from "../exit-codes";
import { CLIENT_NAME, login } from "../login";
import { baseUrlOf, print, type Context } from "./shared";

export async function run(ctx: Context): Promise<number> {
  const { values } = ctx.parsed;
  const session = loadSession(ctx.io.env);
  // An explicit --base-url signs in there; otherwise to the service of the current session, if any.
  const baseUrl = baseUrlOf(ctx, (values["base-url"] as string | undefined) ? undefined : session);
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError("--port must be a port number", ctx.command);
  // With --json, stdout carries only the result: the URL and progress go to stderr.
  const say = ctx.json ? (line: string) => ctx.io.stderr.write(`${line}\n`) : (line: string) => ctx.io.stdout(line);
  const stored = await login({
    baseUrl,
    port,
    openBrowser: !values["no-browser"],
    timeoutSeconds: secondsOption(values, "timeout", 600, ctx.command),
    say,
    input: ctx.io.stdin,
    env: ctx.io.env,
    signal: ctx.signal,
  });
  const staysConnected = stored.tokens.refreshToken ? "" : "\nYou did not choose to stay connected: the session ends in an hour.";
  print(
    ctx,
    { baseUrl: stored.baseUrl, clientId: stored.clientId, scope: stored.tokens.scope ?? null, configFile: configFile(ctx.io.env) },
    `Signed in to ${stored.baseUrl} as "${CLIENT_NAME}" (client ${stored.clientId}).${staysConnected}`,
  );
  return EXIT.ok;
}
