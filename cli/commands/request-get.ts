// `agent-wallet request get <id>`: one request, as it is now.
import { EXIT } from "../exit-codes";
import { requestDetails } from "../format";
import { connect, print, type Context } from "./shared";

export async function run(ctx: Context): Promise<number> {
  const view = await (await connect(ctx)).client.getRequest({ request_id: ctx.parsed.positionals[0] }, { signal: ctx.signal });
  print(ctx, view, requestDetails(view));
  return EXIT.ok;
}
