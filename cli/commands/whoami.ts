// `agent-wallet whoami`: the service, how this CLI is signed in, and the credentials granted.
import { EXIT } from "../exit-codes";
import { keyValues } from "../format";
import { CLIENT_NAME } from "../login";
import { connect, print, type Context } from "./shared";

export async function run(ctx: Context): Promise<number> {
  const connection = await connect(ctx);
  const { credentials } = await connection.client.listCredentials({ signal: ctx.signal });
  const tokens = connection.client.tokens;
  const result = {
    baseUrl: connection.baseUrl,
    auth: connection.via,
    clientId: connection.session?.clientId ?? null,
    apiKey: connection.apiKey ? `${connection.apiKey.slice(0, 13)}…` : null,
    scope: tokens?.scope ?? null,
    expiresAt: tokens?.expiresAt ? new Date(tokens.expiresAt).toISOString() : null,
    staysConnected: connection.via === "oauth" ? Boolean(tokens?.refreshToken) : null,
    credentials,
  };
  print(
    ctx,
    result,
    keyValues([
      ["Service", result.baseUrl],
      [
        "Signed in",
        connection.via === "api_key" ? `with a personal API key (${result.apiKey})` : `as ${CLIENT_NAME} (client ${result.clientId})`,
      ],
      ["Scope", result.scope],
      ["Access until", result.expiresAt],
      ["Stays connected", result.staysConnected === null ? null : result.staysConnected ? "yes" : "no"],
      ["Credentials", credentials.map((credential) => `${credential.name} (${credential.mode})`).join(", ") || "none granted"],
    ]),
  );
  return EXIT.ok;
}
