// Paying x402 resources through Agent Wallet: a 402 with an x402 requirement (V2 `PAYMENT-REQUIRED` header, or a V1
// JSON body), or a paid MCP tool's error carrying one, is handed to pay_x402 as it came, and the call is made once
// more with the payment. Within an allowance Agent Wallet signs with no tap; with an `approve` credential the payment
// waits for the person's passkey (the request is followed until decided). A refusal throws and nothing is paid.
import type { AgentWalletClient, WaitOptions } from "./client";
import { PaymentNotApprovedError } from "./errors";
import type { FetchLike } from "./oauth";
import type { ToolOutput } from "../contract";

type PaymentOptions = {
  /** the credential that pays: `allowance` (no tap, within it) or `approve` (one tap per payment) */
  credentialId: string;
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

/** The payment for `required` as pay_x402 answers it: at once, or once the person approved its request. */
async function paymentFor(
  wallet: AgentWalletClient,
  options: PaymentOptions,
  required: string | Record<string, unknown>,
): Promise<Payment> {
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
async function requirementOf(response: Response): Promise<string | Record<string, unknown> | null> {
  const header = response.headers.get("PAYMENT-REQUIRED");
  if (header) return header;
  const body = (await response.json().catch(() => null)) as Record<string, unknown> | null;
  return body && typeof body === "object" && "x402Version" in body ? body : null;
}

/**
 * `fetch` that answers an x402 402 once: pays through `wallet` and retries with the payment. The request's body must
 * be one that can be sent twice (a string, bytes, form data), as for any retry.
 */
export function payingFetch(wallet: AgentWalletClient, options: PayingFetchOptions): FetchLike {
  const send = options.fetch ?? fetch;
  return async (input, init) => {
    const first = await send(input, init);
    if (first.status !== 402) return first;
    const required = await requirementOf(first.clone());
    if (!required) return first;
    const payment = await paymentFor(wallet, options, required);
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

/**
 * Calls a tool of a paid MCP server through `call` (e.g. `(params) => client.callTool(params)` of the MCP SDK): when
 * it answers with an x402 requirement (`isError` with `PaymentRequired` in `structuredContent`), pays it through
 * `wallet` and calls once more with the payment in `_meta["x402/payment"]`. The server's settlement is in the
 * result's `_meta["x402/payment-response"]`.
 */
export async function callPaidTool<R extends McpToolResult>(
  wallet: AgentWalletClient,
  call: (params: McpToolCall) => Promise<R>,
  params: McpToolCall,
  options: PaymentOptions,
): Promise<R> {
  const first = await call(params);
  const required = toolRequirementOf(first);
  if (!required) return first;
  const payment = await paymentFor(wallet, options, required);
  return call({ ...params, _meta: { ...params._meta, "x402/payment": payloadOf(payment) } });
}
