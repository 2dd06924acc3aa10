// The value the agent sends back with its retry: V2's `PAYMENT-SIGNATURE` header (base64 of the PaymentPayload,
// which repeats the accepted entry exactly as offered) or V1's `X-PAYMENT` header (base64 of scheme, network and
// payload).
import { safeBase64Encode } from "@x402/core/utils";
import type { PaymentPayload, PaymentPayloadV1, PaymentRequirements } from "@x402/core/types";
import type { Address, Hex } from "viem";
import type { Offer, PaymentRequired } from "./requirement";

/** The erc7710 payload of the exact scheme: the delegation chain the facilitator redeems, leaf first. */
export type DelegationPayload = { delegationManager: Address; permissionContext: Hex; delegator: Address };

export type PaymentAnswer = { header: "PAYMENT-SIGNATURE" | "X-PAYMENT"; value: string };

export function paymentAnswer(required: PaymentRequired, offer: Offer, payload: DelegationPayload): PaymentAnswer {
  if (required.version === 1) {
    const v1: PaymentPayloadV1 = { x402Version: 1, scheme: offer.scheme, network: offer.network, payload };
    return { header: "X-PAYMENT", value: safeBase64Encode(JSON.stringify(v1)) };
  }
  const v2: PaymentPayload = {
    x402Version: 2,
    resource: required.resourceOffered,
    // the server matches the accepted entry against what it offered: sent back as it came
    accepted: offer.offered as PaymentRequirements,
    payload,
  };
  return { header: "PAYMENT-SIGNATURE", value: safeBase64Encode(JSON.stringify(v2)) };
}
