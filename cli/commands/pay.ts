// `agent-wallet pay <credential> <url>`: fetches a URL and, when it answers 402 with an x402 requirement, pays it within
// the credential's allowance (no tap) or once the person approves (an approve credential: one tap), and fetches it
// again; prints the response's body, and what was paid on stderr.
import { payingFetch, type ToolOutput } from "../../sdk";
import { EXIT } from "../exit-codes";
import { CliToolError, connectWithCredential, idempotencyKeyOf, print, type Context } from "./shared";

export async function run(ctx: Context): Promise<number> {
  const url = ctx.parsed.positionals[1];
  if (!/^https?:\/\//.test(url)) throw new CliToolError(`${JSON.stringify(url)} is not an http(s) URL. Give the paid resource's address.`);
  const { client, credential } = await connectWithCredential(ctx);
  let paid: ToolOutput<"pay_x402"> | null = null;
  const paying = payingFetch(client, {
    credentialId: credential.id,
    // one run pays once: the SDK's retries of pay_x402, and the command run again with --idempotency-key, reuse it
    idempotencyKey: idempotencyKeyOf(ctx),
    onPayment: (payment) => {
      paid = payment;
      // an approve credential's payment waits for the person's passkey: say where
      if (payment.approval_url)
        ctx.io.stderr.write(
          `Approve paying ${payment.paid.formatted} ${payment.paid.symbol} to ${payment.payee} at ${payment.approval_url}\n`,
        );
    },
    approval: { signal: ctx.signal },
  });
  const response = await paying(url, { signal: ctx.signal });
  const body = await response.text();
  const payment = paid as ToolOutput<"pay_x402"> | null;
  if (payment && !ctx.json)
    ctx.io.stderr.write(`Paid ${payment.paid.formatted} ${payment.paid.symbol} to ${payment.payee} for ${payment.resource.url}\n`);
  print(ctx, { status: response.status, payment, body }, body);
  if (!response.ok)
    throw new CliToolError(`${url} answered ${response.status}${payment ? " even after the payment" : ""}. Nothing more was paid.`);
  return EXIT.ok;
}
