// pay_x402 outside an allowance (an `approve` credential): one tap. The chosen `accepts` entry becomes a pending request
// to sign EIP-3009's TransferWithAuthorization (the exact scheme's eip3009 payload, @x402/evm's default), approved by
// the person with their passkey as any typed data is, and judged by the grant's policy as the token transfer it is
// (the policy reads an authorization as one). Its signature completes the payment that get_request then answers.
// Agent Wallet signs nothing itself here and sends nothing on chain: the payee's facilitator submits the authorization.
import { randomBytes } from "node:crypto";
import { getAddress, toHex, type Address } from "viem";
import type { ToolOutput } from "@/contract";
import { systemClock, type Clock } from "@/lib/clock";
import { config } from "@/lib/config";
import type { AgentContext } from "@/lib/wallet/agent-context";
import { REQUEST_TTL_SECONDS } from "@/lib/wallet/request-lifecycle";
import { createRequest } from "@/lib/wallet/requests";
import { paymentTerms, unsignedPayment, type AuthorizationPayload } from "./answer";
import { cheapest, exactOfferChain } from "./choose";
import type { Offer, PaymentRequired } from "./requirement";

/** EIP-3009's struct, as FiatToken (USDC, EURC) hashes it. */
const TRANSFER_WITH_AUTHORIZATION = [
  { name: "from", type: "address" },
  { name: "to", type: "address" },
  { name: "value", type: "uint256" },
  { name: "validAfter", type: "uint256" },
  { name: "validBefore", type: "uint256" },
  { name: "nonce", type: "bytes32" },
];

/** An entry the person can pay by one authorization: the token's EIP-712 domain comes from the entry's `extra`. */
export type Authorizable = { offer: Offer; chainId: number; asset: Address; payee: Address; amount: bigint; name: string; version: string };

/** Why `offer` cannot be paid by a transfer authorization, or what it authorizes. */
function judge(offer: Offer, configured: readonly number[]): Authorizable | string {
  const chainId = exactOfferChain(offer, configured);
  if (typeof chainId === "string") return chainId;
  // An entry naming no method is the exact scheme's default, eip3009.
  const method = offer.extra.assetTransferMethod ?? "eip3009";
  if (method === "permit2")
    return (
      `chain ${chainId} by permit2, which Agent Wallet does not sign: it would first need the token approved to Permit2 ` +
      "without limit, a standing allowance beside the payment (ask the resource for eip3009)"
    );
  if (method === "erc7710") return `chain ${chainId} by erc7710, which Agent Wallet pays only within an allowance (ask the person for one)`;
  if (method !== "eip3009") return `chain ${chainId} by ${String(method)}, a transfer method Agent Wallet does not know`;
  const { name, version } = offer.extra;
  if (typeof name !== "string" || typeof version !== "string" || !name)
    return `chain ${chainId} by eip3009 without extra.name and extra.version (the token's EIP-712 domain)`;
  const amount = BigInt(offer.amount);
  if (amount <= 0n) return `a payment of ${offer.amount}`;
  return { offer, chainId, asset: getAddress(offer.asset), payee: getAddress(offer.payTo), amount, name, version };
}

/** The cheapest entry payable by eip3009, or a refusal saying why each entry cannot be paid. */
export function oneTapChoice(required: PaymentRequired): Authorizable {
  const configured = config().chains.map((chain) => chain.id);
  return cheapest(required.accepts.map((offer) => judge(offer, configured)));
}

/**
 * A pending request for the person to approve the cheapest entry payable by eip3009 (or `asked.choice`, with why the
 * credential's allowance did not pay it), or a refusal saying why each entry cannot be paid (before anything is
 * created). The answer names the request; its `header` and `value` come with get_request once the person approved.
 */
export async function payWithOneTap(
  agent: AgentContext,
  credentialId: string,
  required: PaymentRequired,
  clock: Clock = systemClock,
  asked?: { choice: Authorizable; reason: string },
): Promise<ToolOutput<"pay_x402">> {
  const choice = asked?.choice ?? oneTapChoice(required);
  const wallet = agent.credentials.find((entry) => entry.credentialId === credentialId)!;
  // The person has the request's lifetime to approve, and the payee the entry's timeout after that: a window fixed
  // now, since the passkey approves exactly the typed data shown. Valid at once (validAfter 0), as @x402/evm's client.
  const validBefore = Math.floor(clock().getTime() / 1000) + REQUEST_TTL_SECONDS + choice.offer.maxTimeoutSeconds;
  const payload: AuthorizationPayload = {
    authorization: {
      from: getAddress(wallet.address),
      to: choice.payee,
      value: choice.amount.toString(),
      validAfter: "0",
      validBefore: String(validBefore),
      nonce: toHex(randomBytes(32)),
    },
  };
  const view = await createRequest(
    agent,
    {
      kind: "sign_typed_data",
      credential_id: credentialId,
      typed_data: {
        domain: { name: choice.name, version: choice.version, chainId: choice.chainId, verifyingContract: choice.asset },
        types: { TransferWithAuthorization: TRANSFER_WITH_AUTHORIZATION },
        primaryType: "TransferWithAuthorization",
        message: payload.authorization,
      },
    },
    { x402: unsignedPayment(required, choice.offer, payload), ...(asked && { reason: asked.reason }) },
    clock,
  );
  return {
    header: null,
    value: null,
    payment_id: view.request_id,
    request_id: view.request_id,
    approval_url: view.approval_url,
    ...(await paymentTerms(required, choice, validBefore)),
    allowance_id: null,
  };
}
