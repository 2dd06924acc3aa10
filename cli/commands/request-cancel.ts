// `agent-wallet request cancel <id>`: cancels a pending request (the tool refuses any other: exit code 4).
import { EXIT } from "../exit-codes";
import { requestDetails } from "../format";
import { connect, print, type Context } from "./shared";

export async function run(ctx: Context): Promise<number> {
  const view = await (await connect(ctx)).client.cancelRequest({ request_id: ctx.parsed.positionals[0] }, { signal: ctx.signal });
  print(ctx, view, view.status === "cancelled" ? `Cancelled request ${view.request_id}.` : requestDetails(view));
  return EXIT.ok;
}
