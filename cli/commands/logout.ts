// `agent-wallet logout`: deletes the stored session (the server-side revocation is on the app's Clients screen).
import { deleteSession, loadSession } from "../config";
import { EXIT } from "../exit-codes";
import { print, type Context } from "./shared";

export async function run(ctx: Context): Promise<number> {
  const session = loadSession(ctx.io.env);
  const removed = deleteSession(ctx.io.env);
  print(
    ctx,
    { signedOut: removed, baseUrl: session?.baseUrl ?? null },
    removed
      ? `Signed out of ${session?.baseUrl ?? "the service"}: the stored session is deleted.\n` +
          "To revoke this client's access on the server too, use the Clients screen of the app."
      : "Not signed in: nothing to do.",
  );
  return EXIT.ok;
}
