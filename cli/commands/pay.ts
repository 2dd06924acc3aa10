// `agent-wallet pay <credential> <url>`: fetches a URL and, when it answers 402 with an x402 requirement, pays it within
// the credential's allowance (no tap) or once the person approves (an approve credential: one tap), and fetches it
// again; prints the response's body, and what was paid on stderr, a spinner there while it waits. Each URL and address
// starts a line of its own, so that an 80-column terminal never breaks one in the middle of a sentence.
import { payingFetch, readableUnits, type ToolOutput } from "../../sdk";
import { UsageError } from "../args";
import { EXIT } from "../exit-codes";
import { Spinner } from "../spinner";
import {
  CliToolError,
  connectWithCredential,
  idempotencyKeyOf,
  ownKeyAllowance,
  print,
  ResourceUnreachableError,
  trustedEnforcer,
  type Context,
} from "./shared";

/** Why a fetch got no answer, in words, from the error Node's fetch gives as its cause. */
function unreachable(error: unknown): string | null {
  if (!(error instanceof TypeError) || !(error.cause instanceof Error)) return null;
  const cause = error.cause as Error & { code?: string; errors?: { code?: string }[] };
  const code = cause.code ?? cause.errors?.find((each) => each.code)?.code;
  const words: Record<string, string> = {
    ECONNREFUSED: "the connection was refused (nothing listens there)",
    ENOTFOUND: "the host name does not resolve",
    EAI_AGAIN: "the host name could not be resolved right now",
    ETIMEDOUT: "the connection timed out",
    UND_ERR_CONNECT_TIMEOUT: "the connection timed out",
    ECONNRESET: "the connection was reset",
    UND_ERR_SOCKET: "the connection was closed before an answer",
    EHOSTUNREACH: "the host is unreachable",
    ENETUNREACH: "the network is unreachable",
  };
  return code && words[code] ? `${words[code]} (${code})` : cause.message || code || null;
}

const MOST = /^\s*(\d+(?:\.\d*)?|\.\d+)\s*(0x[0-9a-fA-F]{40}|[A-Za-z][A-Za-z0-9._$-]*)\s*$/;

/** --max as the SDK's maxPerPayment: "0.50 USDC,1 EURC" → { USDC: "0.50", EURC: "1" }; left out, the SDK's default. */
export function maxOption(raw: string | undefined, command?: Context["command"]): Record<string, string> | undefined {
  if (raw === undefined) return undefined;
  const mosts: Record<string, string> = {};
  for (const part of raw.split(",")) {
    const match = MOST.exec(part);
    if (!match)
      throw new UsageError(`--max takes an amount and a token, such as "0.50 USDC" (${JSON.stringify(part.trim())} is not one)`, command);
    mosts[match[2]] = match[1];
  }
  return mosts;
}

/** A paid amount as a person reads it: a few digits, never shown below what was paid. */
const amountOf = (paid: ToolOutput<"pay_x402">["paid"]) => `${readableUnits(paid.formatted, true)} ${paid.symbol}`;

export async function run(ctx: Context): Promise<number> {
  const url = ctx.parsed.positionals[1];
  if (!/^https?:\/\//.test(url)) throw new CliToolError(`${JSON.stringify(url)} is not an http(s) URL. Give the paid resource's address.`);
  const maxPerPayment = maxOption(ctx.parsed.values.max as string | undefined, ctx.command);
  const { host } = new URL(url);
  const exactExecutionEnforcer = trustedEnforcer(ctx);
  const { client, credential } = await connectWithCredential(ctx);
  const key = idempotencyKeyOf(ctx);
  // an allowance this CLI's own key spends: the key pays (funded through the relayer) and nobody is asked
  const own = await ownKeyAllowance(ctx, client, credential.id);
  // --json keeps stderr for the error alone
  const spinner = ctx.json ? null : new Spinner(ctx.io.stderr);
  let paid: ToolOutput<"pay_x402"> | null = null;
  const paying = payingFetch(client, {
    credentialId: credential.id,
    maxPerPayment,
    ...(own && { ownKey: { ...own, exactExecutionEnforcer } }),
    // one run pays once: the SDK's retries of pay_x402, and the command run again with --idempotency-key, reuse it
    idempotencyKey: key,
    fetch: async (input, init) => {
      try {
        return await fetch(input, init);
      } catch (error) {
        const reason = unreachable(error);
        if (reason === null) throw error;
        const after = paid
          ? `The payment signed for it is held until it expires: run again with --idempotency-key ${key} to send the same one.`
          : "Nothing was paid.";
        throw new ResourceUnreachableError(`Could not reach ${host}: ${reason}. ${after}`);
      }
    },
    onPayment: (payment) => {
      paid = payment;
      // an approve credential's payment waits for the person's passkey: say where
      if (!payment.approval_url) return spinner?.update(`Paid; fetching ${url} again`);
      spinner?.stop();
      ctx.io.stderr.write(`Approve paying ${amountOf(payment.paid)} to ${payment.payee} at:\n${payment.approval_url}\n`);
      spinner?.start(`Waiting for your approval of request ${payment.request_id}`);
    },
    approval: { signal: ctx.signal },
  });
  spinner?.start(`Fetching ${url}`);
  let response: Response;
  let body: string;
  try {
    response = await paying(url, { signal: ctx.signal });
    body = await response.text();
  } finally {
    spinner?.stop();
  }
  const payment = paid as ToolOutput<"pay_x402"> | null;
  if (payment && !ctx.json) ctx.io.stderr.write(`Paid ${amountOf(payment.paid)} to ${payment.payee}\nfor ${payment.resource.url}\n`);
  print(ctx, { status: response.status, payment, body }, body);
  if (!response.ok)
    throw new CliToolError(`${url} answered ${response.status}${payment ? " even after the payment" : ""}. Nothing more was paid.`);
  return EXIT.ok;
}
