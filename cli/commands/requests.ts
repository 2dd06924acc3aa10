// `agent-wallet requests [--status] [--limit]`: this client's recent requests, newest first.
import { REQUEST_STATUSES, type RequestStatus } from "../../sdk";
import { UsageError } from "../args";
import { EXIT } from "../exit-codes";
import { requestsTable } from "../format";
import { connect, print, type Context } from "./shared";

export async function run(ctx: Context): Promise<number> {
  const { values } = ctx.parsed;
  const status = values.status as string | undefined;
  if (status !== undefined && !REQUEST_STATUSES.includes(status as RequestStatus)) {
    throw new UsageError(`--status must be one of ${REQUEST_STATUSES.join(", ")}`, ctx.command);
  }
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 100))
    throw new UsageError("--limit must be 1 to 100", ctx.command);
  const { requests } = await (
    await connect(ctx)
  ).client.listRequests({ ...(status ? { status: status as RequestStatus } : {}), ...(limit ? { limit } : {}) }, { signal: ctx.signal });
  print(ctx, { requests }, requestsTable(requests));
  return EXIT.ok;
}
