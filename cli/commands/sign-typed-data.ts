// `agent-wallet sign-typed-data <credential> <json-file|->`: an EIP-712 signature, once the person approves.
import fs from "node:fs";
import { UsageError } from "../args";
import { sensitive, type Context } from "./shared";

export async function run(ctx: Context): Promise<number> {
  // Read first: a missing or malformed file is a usage error, whatever the sign-in state.
  const typedData = await readTypedData(ctx, ctx.parsed.positionals[1]);
  // The SDK validates the typed data against the tool's schema before sending it.
  return sensitive(ctx, (client, credentialId, _listed, idempotencyKey) =>
    client.signTypedData(
      { credential_id: credentialId, typed_data: typedData as never, idempotency_key: idempotencyKey },
      { signal: ctx.signal },
    ),
  );
}

/** The JSON in a file, or on stdin for "-". */
async function readTypedData(ctx: Context, source: string): Promise<unknown> {
  let text: string;
  try {
    if (source === "-") {
      const chunks: Buffer[] = [];
      for await (const chunk of ctx.io.stdin) chunks.push(Buffer.from(chunk));
      text = Buffer.concat(chunks).toString("utf8");
    } else {
      text = fs.readFileSync(source, "utf8");
    }
  } catch (error) {
    throw new UsageError(`Cannot read ${source}: ${(error as Error).message}`, ctx.command);
  }
  try {
    return JSON.parse(text);
  } catch {
    const where = source === "-" ? "stdin" : source;
    throw new UsageError(`${where} is not JSON: expected EIP-712 typed data {domain, types, primaryType, message}`, ctx.command);
  }
}
