// The value the agent sends back with its retry: V2's `PAYMENT-SIGNATURE` header (base64 of the PaymentPayload,
// which repeats the accepted entry exactly as offered) or V1's `X-PAYMENT` header (base64 of scheme, network and
// payload).
import type { Network, PaymentPayload, PaymentPayloadV1, PaymentRequirements } from "@x402/core/types";
import { formatUnits, type Address, type Hex } from "viem";
import { assetNames } from "@/lib/allowances/view";
import { base64Json, type X402Context } from "@/lib/wallet/request-payload";
import type { Offer, PaymentRequired } from "./requirement";

/** The erc7710 payload of the exact scheme: the delegation chain the facilitator redeems, leaf first. */
export type DelegationPayload = { delegationManager: Address; permissionContext: Hex; delegator: Address };

/** The eip3009 payload of the exact scheme without its signature: the TransferWithAuthorization's fields, as strings. */
export type AuthorizationPayload = {
  authorization: { from: Address; to: Address; value: string; validAfter: string; validBefore: string; nonce: Hex };
};

/** The permit2 payload of the exact scheme without its signature: the Permit2 witness transfer's fields, as strings. */
export type Permit2Payload = {
  permit2Authorization: {
    from: Address;
    permitted: { token: Address; amount: string };
    spender: Address;
    nonce: string;
    deadline: string;
    witness: { to: Address; validAfter: string };
  };
};

export type PaymentAnswer = { header: "PAYMENT-SIGNATURE" | "X-PAYMENT"; value: string };

/** A payment signed with no tap within an allowance: the header to retry with, and what it pays. */
export type PaidX402 = PaymentAnswer & {
  payment_id: string;
  paid: { amount: string; formatted: string; symbol: string; token: Address; chain_id: number; network: string };
  payee: Address;
  resource: { url: string; description: string | null };
  expires_at: string;
  allowance_id: string;
};

/** The payment to send back for `offer`, carrying `payload`, and the header it goes in. */
function paymentBody(
  required: PaymentRequired,
  offer: Offer,
  payload: Record<string, unknown>,
): { header: PaymentAnswer["header"]; body: PaymentPayload | PaymentPayloadV1 } {
  // V1's network as the payee named it (`base-sepolia`), not the CAIP-2 it was read as
  if (required.version === 1)
    return { header: "X-PAYMENT", body: { x402Version: 1, scheme: offer.scheme, network: offer.offered.network as Network, payload } };
  const body: PaymentPayload = {
    x402Version: 2,
    resource: required.resourceOffered,
    // the server matches the accepted entry against what it offered: sent back as it came
    accepted: offer.offered as PaymentRequirements,
    payload,
  };
  return { header: "PAYMENT-SIGNATURE", body };
}

/** The eip3009 or permit2 payload of the exact scheme, signed: as `@x402/evm`'s exact client builds it. */
export type SignedAuthorization = (AuthorizationPayload | Permit2Payload) & { signature: Hex };

export function paymentAnswer(required: PaymentRequired, offer: Offer, payload: DelegationPayload | SignedAuthorization): PaymentAnswer {
  const { header, body } = paymentBody(required, offer, payload);
  return { header, value: base64Json(body) };
}

/** What a one-tap payment's request keeps until the person signs: everything but the signature (answeredWith). */
export function unsignedPayment(required: PaymentRequired, offer: Offer, payload: AuthorizationPayload | Permit2Payload): X402Context {
  const { header, body } = paymentBody(required, offer, payload);
  return { resource: required.resource, header, unsigned: body as X402Context["unsigned"] };
}

/** What a payment pays, to whom, for what, and until when, in pay_x402's words (the token's units and symbol). */
export async function paymentTerms(
  required: PaymentRequired,
  choice: { amount: bigint; asset: Address; chainId: number; payee: Address; offer: { network: string } },
  expiresAt: number,
) {
  const names = await assetNames(choice.chainId, choice.asset);
  return {
    paid: {
      amount: choice.amount.toString(),
      formatted: formatUnits(choice.amount, names.decimals),
      symbol: names.symbol,
      token: choice.asset,
      chain_id: choice.chainId,
      network: choice.offer.network,
    },
    payee: choice.payee,
    resource: required.resource,
    expires_at: new Date(expiresAt * 1000).toISOString(),
  };
}
