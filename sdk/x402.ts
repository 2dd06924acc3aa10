// Paying x402 resources through Agent Wallet: a 402 with an x402 requirement (V2 `PAYMENT-REQUIRED` header, or a V1
// JSON body), or a paid MCP tool's error carrying one, is checked on the agent's own side (decision 0036: for the
// resource fetched or the tool called, at most the most per payment, and `beforePay`), handed to pay_x402, and the call
// is made once more with the payment. Within an allowance Agent Wallet signs with no tap; with an `approve` credential
// the payment waits for the person's passkey (the request is followed until decided). A refusal throws and nothing is
// paid; a refusal of the agent's own side (PaymentRefusedError) comes before pay_x402 is called, so nothing is signed.
import type { AgentWalletClient, WaitOptions } from "./client";
import { InvalidInputError, PaymentNotApprovedError, PaymentRefusedError, ToolError, type PaymentRefusal } from "./errors";
import type { FetchLike } from "./oauth";
import { formatUnits } from "../contract/limits-in-words";
import type { ToolOutput } from "../contract";
import { ownKeyPayment, type OwnKey } from "./own-x402";
import {
  maxInBaseUnits,
  mostFor,
  narrowed,
  networkChainId,
  readRequirement,
  type CheckedOffer,
  type GivenRequirement,
  type PaymentOffer,
  type PaymentRequirement,
  sameResource,
  sameTool,
} from "./x402-guard";

type PaymentOptions = {
  /** the credential that pays: `allowance` (no tap, within it) or `approve` (one tap per payment) */
  credentialId: string;
  /**
   * The most one payment may ask, per token, in whole tokens as a person writes them: `{ USDC: "0.50" }`, keyed by
   * the token's symbol as it reports it on chain or by its address. Given, a token it names no most for is not paid.
   * Left out, every token's most is 0.10 (DEFAULT_MAX_PER_PAYMENT). An offer above it is not paid.
   */
  maxPerPayment?: Record<string, string>;
  /**
   * Shown the requirement (only the offers the checks passed, each in whole tokens with its symbol) before anything
   * is signed: `false` refuses it (PaymentRefusedError "refused_by_hook"), and an error thrown here is thrown as is.
   */
  beforePay?: (requirement: PaymentRequirement) => boolean | void | Promise<boolean | void>;
  /**
   * Pay with your own key from an allowance it spends (request_allowance), not through pay_x402 (ownKeyPayment): an
   * exact/erc7710 offer by a one-time delegation your key signs to the merchant's facilitator; a stock merchant's
   * exact/eip3009 offer funded from the allowance to your key through the relayer, then authorized by your key.
   * onPayment is told of such a payment with the delegation's hash, or the funding's request, as its payment_id.
   */
  ownKey?: OwnKey;
  /** told of each payment before the retry is sent: what is paid, to whom, for what (and, for one tap, its request) */
  onPayment?: (payment: ToolOutput<"pay_x402">) => void;
  /** how long to wait for the person's approval of a one-tap payment (waitForRequest's options) */
  approval?: WaitOptions;
  /**
   * pay_x402's idempotency key, for a caller that may run the same payment again (after a crash, say): the same key
   * and requirement answer the first payment, never a second one. Default: a new key for each payment, which the
   * SDK's own retries of pay_x402 reuse. One key is one payment: a second, other requirement with it is refused.
   */
  idempotencyKey?: string;
};

export type PayingFetchOptions = PaymentOptions & { fetch?: FetchLike };

type Payment = { header: "PAYMENT-SIGNATURE" | "X-PAYMENT"; value: string };

/** A token's symbol and decimals as the wallet reads them on chain; null when it does not answer as an ERC-20. */
type TokenOf = (chainId: number, asset: string) => Promise<{ symbol: string; decimals: number } | null>;

/** Refuses a most that is no amount in whole tokens before anything is fetched. */
function checkMosts(maxPerPayment: Record<string, string> | undefined): void {
  for (const [token, most] of Object.entries(maxPerPayment ?? {})) {
    if (typeof most !== "string" || !/^\s*(\d+(\.\d*)?|\.\d+)\s*$/.test(most))
      throw new InvalidInputError("pay_x402", `maxPerPayment.${token} must be an amount in whole tokens, such as "0.50"`);
  }
}

/** Reads tokens through get_balance, each (chain, token) once for the payingFetch or callPaidTool it serves. */
function tokenReader(wallet: AgentWalletClient, credentialId: string): TokenOf {
  const read = new Map<string, Promise<{ symbol: string; decimals: number } | null>>();
  return (chainId, asset) => {
    const key = `${chainId}:${asset.toLowerCase()}`;
    if (!read.has(key)) {
      const reading = wallet.getBalance({ credential_id: credentialId, chain_id: chainId, tokens: [asset] }).then(
        ({ tokens }) => {
          const [token] = tokens;
          return token && token.symbol !== null && token.decimals !== null ? { symbol: token.symbol, decimals: token.decimals } : null;
        },
        (error: unknown) => {
          // a chain the service does not serve, or no address: the token cannot be read, as pay_x402 would refuse it
          if (error instanceof ToolError || error instanceof InvalidInputError) return null;
          // the network: not remembered, the next payment reads it again
          read.delete(key);
          throw error;
        },
      );
      read.set(key, reading);
    }
    return read.get(key)!;
  };
}

type Judged = { offer: CheckedOffer } | { refusal: PaymentRefusal; why: string };

/** Whether one offer is within the caller's most, in whole tokens of its token. */
async function judgeAmount(offer: PaymentOffer, options: PaymentOptions, tokenOf: TokenOf): Promise<Judged> {
  const chainId = offer.chainId ?? (await networkChainId(offer.network));
  if (chainId === null || !/^[0-9]{1,78}$/.test(offer.amount)) {
    return {
      refusal: "unreadable",
      why: `it asks ${JSON.stringify(offer.amount)} on network ${JSON.stringify(offer.network)}, which the SDK cannot read`,
    };
  }
  const token = await tokenOf(chainId, offer.asset);
  if (!token)
    return {
      refusal: "unreadable",
      why: `it asks to be paid in ${offer.asset} on chain ${chainId}, which is no token the wallet can read`,
    };
  const formatted = formatUnits(offer.amount, token.decimals);
  const most = mostFor(options.maxPerPayment, { address: offer.asset, symbol: token.symbol });
  if (most === null) {
    const named = Object.keys(options.maxPerPayment ?? {}).join(", ") || "none";
    return {
      refusal: "no_max",
      why: `it asks ${formatted} ${token.symbol} (${offer.asset}), a token with no most given (given for: ${named})`,
    };
  }
  if (BigInt(offer.amount) > maxInBaseUnits(most, token.decimals)) {
    return { refusal: "over_max", why: `it asks ${formatted} ${token.symbol}, more than the most of ${most} ${token.symbol} a payment` };
  }
  return { offer: { ...offer, chainId, symbol: token.symbol, decimals: token.decimals, formatted, most } };
}

/**
 * The requirement as it may be handed to pay_x402: for the resource (`isFor`), each offer within the caller's most,
 * and passed by `beforePay`; with only those offers when some others were not. Throws PaymentRefusedError otherwise.
 */
async function checked(
  given: GivenRequirement,
  options: PaymentOptions,
  tokenOf: TokenOf,
  expected: { what: string; isFor: (named: string) => boolean },
): Promise<GivenRequirement> {
  const read = readRequirement(given);
  if (!read)
    throw new PaymentRefusedError("unreadable", "The resource's payment requirement cannot be read as x402 (version 1 or 2)", given);
  const judged: Judged[] = await Promise.all(
    read.accepts.map((offer) =>
      expected.isFor(offer.resource)
        ? judgeAmount(offer, options, tokenOf)
        : { refusal: "other_resource" as const, why: `it is for ${JSON.stringify(offer.resource)}, not ${expected.what}` },
    ),
  );
  const passed = judged.flatMap((each) => ("offer" in each ? [each.offer] : []));
  if (!passed.length) {
    const first = judged.find((each) => "refusal" in each) as { refusal: PaymentRefusal; why: string };
    const more = judged.length > 1 ? ` (and ${judged.length - 1} other offer${judged.length > 2 ? "s" : ""} not payable either)` : "";
    throw new PaymentRefusedError(first.refusal, `Refused to pay ${expected.what}: ${first.why}${more}`, given);
  }
  const requirement: PaymentRequirement = { ...read, accepts: passed };
  if ((await options.beforePay?.(requirement)) === false)
    throw new PaymentRefusedError("refused_by_hook", `Refused to pay ${expected.what}: beforePay said no`, given);
  const kept = new Set(judged.flatMap((each, index) => ("offer" in each ? [index] : [])));
  return narrowed(given, (index) => kept.has(index));
}

/**
 * The payment for `required` as pay_x402 answers it (at once, or once the person approved its request), or as your own
 * key pays it.
 */
async function paymentFor(
  wallet: AgentWalletClient,
  options: PaymentOptions,
  required: GivenRequirement,
  tokenOf: TokenOf,
): Promise<Payment> {
  if (options.ownKey) {
    const own = await ownKeyPayment(wallet, options.ownKey, options.credentialId, required, options.idempotencyKey);
    const chainId = options.ownKey.permission.chain_id;
    const token = await tokenOf(chainId, own.asset);
    options.onPayment?.({
      header: own.header,
      value: own.value,
      payment_id: own.paymentId,
      request_id: null,
      approval_url: null,
      paid: {
        amount: String(own.amount),
        formatted: token ? formatUnits(String(own.amount), token.decimals) : String(own.amount),
        symbol: token?.symbol ?? own.asset,
        token: own.asset,
        chain_id: chainId,
        network: own.network,
      },
      payee: own.payee,
      resource: own.resource,
      expires_at: own.expiresAt.toISOString(),
      allowance_id: options.ownKey.permission.allowance_id,
    });
    return { header: own.header, value: own.value };
  }
  const paid = await wallet.payX402({
    credential_id: options.credentialId,
    payment_required: required,
    ...(options.idempotencyKey !== undefined && { idempotency_key: options.idempotencyKey }),
  });
  options.onPayment?.(paid);
  if (paid.header !== null && paid.value !== null) return { header: paid.header, value: paid.value };
  const view = await wallet.waitForRequest(paid.request_id!, options.approval);
  if (view.status !== "completed" || !view.payment) throw new PaymentNotApprovedError(view.request_id, view.status, view.reason);
  return view.payment;
}

/** The requirement a 402 carries, as the resource gave it; null when it carries none (not an x402 402). */
async function requirementOf(response: Response): Promise<GivenRequirement | null> {
  const header = response.headers.get("PAYMENT-REQUIRED");
  if (header) return header;
  const body = (await response.json().catch(() => null)) as Record<string, unknown> | null;
  return body && typeof body === "object" && "x402Version" in body ? body : null;
}

/**
 * `fetch` that answers an x402 402 once: pays through `wallet` and retries with the payment. Only a requirement for
 * the URL fetched (its origin and path; the query is not compared) within the most per payment is paid. The
 * request's body must be one that can be sent twice (a string, bytes, form data), as for any retry.
 */
export function payingFetch(wallet: AgentWalletClient, options: PayingFetchOptions): FetchLike {
  checkMosts(options.maxPerPayment);
  const send = options.fetch ?? fetch;
  const tokenOf = tokenReader(wallet, options.credentialId);
  return async (input, init) => {
    const first = await send(input, init);
    if (first.status !== 402) return first;
    const required = await requirementOf(first.clone());
    if (!required) return first;
    // the URL asked for, not one a redirect led to: a resource that sends the agent elsewhere to pay is not paid
    const fetched = input instanceof Request ? input.url : String(input);
    const allowed = await checked(required, options, tokenOf, { what: fetched, isFor: (named) => sameResource(fetched, named) });
    const payment = await paymentFor(wallet, options, allowed, tokenOf);
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    headers.set(payment.header, payment.value);
    return send(input, { ...init, headers });
  };
}

/** A tools/call's parameters and result, as the MCP SDK's `Client.callTool` takes and answers them. */
export type McpToolCall = { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> };
export type McpToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; _meta?: Record<string, unknown> };

/** The x402 requirement a paid tool's error carries in `structuredContent` (x402's MCP transport); null otherwise. */
function toolRequirementOf(result: McpToolResult): Record<string, unknown> | null {
  const content = result.structuredContent;
  return result.isError && content && typeof content === "object" && "x402Version" in content && "accepts" in content ? content : null;
}

/** The PaymentPayload a header value carries: the MCP transport sends it as JSON in `_meta`, not base64. */
function payloadOf(payment: Payment): Record<string, unknown> {
  const bytes = Uint8Array.from(atob(payment.value), (character) => character.charCodeAt(0));
  return JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
}

/** callPaidTool's options: `resource`, when the caller knows the URL the server names the tool by, pins it exactly. */
export type PaidToolOptions = PaymentOptions & { resource?: string };

/**
 * Calls a tool of a paid MCP server through `call` (e.g. `(params) => client.callTool(params)` of the MCP SDK): when
 * it answers with an x402 requirement (`isError` with `PaymentRequired` in `structuredContent`), pays it through
 * `wallet` and calls once more with the payment in `_meta["x402/payment"]`. The server's settlement is in the
 * result's `_meta["x402/payment-response"]`. Only a requirement naming the tool called (an `mcp:` URL ending in its
 * name, or exactly `options.resource`) within the most per payment is paid.
 */
export async function callPaidTool<R extends McpToolResult>(
  wallet: AgentWalletClient,
  call: (params: McpToolCall) => Promise<R>,
  params: McpToolCall,
  options: PaidToolOptions,
): Promise<R> {
  checkMosts(options.maxPerPayment);
  const first = await call(params);
  const required = toolRequirementOf(first);
  if (!required) return first;
  const tokenOf = tokenReader(wallet, options.credentialId);
  const what = `the tool ${JSON.stringify(params.name)}`;
  const allowed = await checked(required, options, tokenOf, { what, isFor: (named) => sameTool(params.name, named, options.resource) });
  const payment = await paymentFor(wallet, options, allowed, tokenOf);
  return call({ ...params, _meta: { ...params._meta, "x402/payment": payloadOf(payment) } });
}
