// `agent-wallet login`: the sign-in with a code (cli/login.ts), then what was stored.
import { configFile, loadSession } from "../config";
import { EXIT } from "../exit-codes";
import { CLIENT_NAME, login } from "../login";
import { Spinner } from "../spinner";
import { baseUrlOf, print, type Context } from "./shared";

export async function run(ctx: Context): Promise<number> {
  const { values } = ctx.parsed;
  // An explicit --base-url signs in there; otherwise to the service of the current session, if any.
  const baseUrl = baseUrlOf(ctx, (values["base-url"] as string | undefined) ? undefined : loadSession(ctx.io.env));
  // With --json, stdout carries only the result: the code, the URL and progress go to stderr.
  const say = ctx.json ? (line: string) => ctx.io.stderr.write(`${line}\n`) : (line: string) => ctx.io.stdout(line);
  const spinner = new Spinner(ctx.io.stderr);
  const stored = await login({
    baseUrl,
    openBrowser: !values["no-browser"],
    say,
    waiting: { start: (text) => spinner.start(text), stop: () => spinner.stop() },
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
