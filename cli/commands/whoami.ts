// `agent-wallet whoami`: the service, how this CLI is signed in, and the credentials granted.
import { EXIT } from "../exit-codes";
import { keyValues } from "../format";
import { connect, print, type Context, signedInAs } from "./shared";

export async function run(ctx: Context): Promise<number> {
  const connection = await connect(ctx);
  const { credentials, account } = await connection.client.listCredentials({ signal: ctx.signal });
  const tokens = connection.client.tokens;
  const result = {
    baseUrl: connection.baseUrl,
    account,
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
      ["Account", account?.email_hint],
      ["Signed in", signedInAs(connection, account?.client_name)],
      ["Scope", result.scope],
      ["Access until", result.expiresAt],
      ["Stays connected", result.staysConnected === null ? null : result.staysConnected ? "yes" : "no"],
      ["Credentials", credentials.map((credential) => `${credential.name} (${credential.mode})`).join(", ") || "none granted"],
    ]),
  );
  return EXIT.ok;
}
