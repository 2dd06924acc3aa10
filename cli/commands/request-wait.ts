// `agent-wallet request wait <id>`: resumes waiting for a request (e.g. after --no-wait or Ctrl-C).
import { DEFAULT_WAIT_SECONDS, secondsOption } from "../args";
import { connect, settle, type Context } from "./shared";

export async function run(ctx: Context): Promise<number> {
  const { client } = await connect(ctx);
  const seconds = secondsOption(ctx.parsed.values, "timeout", DEFAULT_WAIT_SECONDS, ctx.command);
  return settle(ctx, client, await client.getRequest({ request_id: ctx.parsed.positionals[0] }, { signal: ctx.signal }), seconds);
}
