// `agent-wallet credentials`: the credentials granted to this client.
import { EXIT } from "../exit-codes";
import { table } from "../format";
import { connect, print, type Context } from "./shared";

export async function run(ctx: Context): Promise<number> {
  const { credentials } = await (await connect(ctx)).client.listCredentials({ signal: ctx.signal });
  print(
    ctx,
    { credentials },
    credentials.length
      ? table(credentials, [
          { header: "NAME", value: (c) => c.name },
          { header: "MODE", value: (c) => c.mode },
          { header: "KIND", value: (c) => c.kind },
          { header: "ADDRESS", value: (c) => c.address },
          { header: "ID", value: (c) => c.id },
        ])
      : "No credentials granted.",
  );
  return EXIT.ok;
}
