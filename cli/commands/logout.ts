// `agent-wallet logout`: revokes the session's token at the service (RFC 7009; the grant ends with it), then
// deletes the stored session. The CLI's registration stays, so the next login reuses it.
import { discover, revokeToken } from "../../sdk";
import { deleteSession, loadSession } from "../config";
import { EXIT } from "../exit-codes";
import { print, withNextStep, type Context } from "./shared";

export async function run(ctx: Context): Promise<number> {
  const session = loadSession(ctx.io.env);
  if (!session) {
    print(ctx, { signedOut: false, revoked: false, baseUrl: null }, "Not signed in: nothing to do.");
    return EXIT.ok;
  }
  let problem: string | null = null;
  try {
    const { authorizationServerMetadata } = await discover(session.baseUrl, { signal: ctx.signal });
    const endpoint = authorizationServerMetadata.revocation_endpoint;
    if (typeof endpoint !== "string") throw new Error("the service offers no revocation endpoint");
    const token = session.tokens.refreshToken ?? session.tokens.accessToken;
    await revokeToken({ revocationEndpoint: endpoint, clientId: session.clientId, token }, { signal: ctx.signal });
  } catch (error) {
    problem = error instanceof Error ? error.message : String(error);
  }
  deleteSession(ctx.io.env);
  print(
    ctx,
    { signedOut: true, revoked: problem === null, baseUrl: session.baseUrl },
    problem === null
      ? `Signed out of ${session.baseUrl}: the access is revoked there and the stored session is deleted.`
      : withNextStep(
          `Signed out here (the stored session is deleted), but ${session.baseUrl} could not revoke the access: ${problem}`,
          'Revoke "Agent Wallet CLI" on the Clients screen of the app',
        ),
  );
  return problem === null ? EXIT.ok : EXIT.network;
}
