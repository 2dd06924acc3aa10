// A fetch that pays x402 resources through Agent Wallet: a 402 with an x402 requirement (V2 `PAYMENT-REQUIRED` header,
// or a V1 JSON body) is handed to pay_x402, and the request is sent once more with the payment header it answers.
// Agent Wallet signs within the credential's allowance, with no tap; a refusal throws ToolError and nothing is paid.
import type { AgentWalletClient } from "./client";
import type { FetchLike } from "./oauth";
import type { ToolOutput } from "../contract";

export type PayingFetchOptions = {
  /** the allowance-mode credential that pays */
  credentialId: string;
  fetch?: FetchLike;
  /** told of each payment before the retry is sent: what was paid, to whom, for what */
  onPayment?: (payment: ToolOutput<"pay_x402">) => void;
};

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
    const payment = await wallet.payX402({ credential_id: options.credentialId, payment_required: required });
    options.onPayment?.(payment);
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    headers.set(payment.header, payment.value);
    return send(input, { ...init, headers });
  };
}
