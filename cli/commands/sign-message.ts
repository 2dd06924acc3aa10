// `agent-wallet sign-message <credential> <message>`: an EIP-191 signature, once the person approves.
import { sensitive, type Context } from "./shared";

export async function run(ctx: Context): Promise<number> {
  const message = ctx.parsed.positionals[1];
  return sensitive(ctx, (client, credentialId, _listed, idempotencyKey) =>
    client.signMessage({ credential_id: credentialId, message, idempotency_key: idempotencyKey }, { signal: ctx.signal }),
  );
}
