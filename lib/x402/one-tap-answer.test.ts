import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { getAddress } from "viem";
import { x402PaymentValue } from "@/lib/wallet/request-payload";
import { unsignedPayment, type AuthorizationPayload } from "./answer";
import { parsePaymentRequired } from "./requirement";

const TOKEN = getAddress("0x036cbd53842c5426634e7929541ec2318f3dcf7e");
const PAYEE = getAddress("0x209693bc6afc0c5328ba36faf03c514ef312287c");
const PAYER = getAddress("0x00000000000000000000000000000000000000aa");

const entry = { scheme: "exact", network: "eip155:84532", amount: "10000", asset: TOKEN, payTo: PAYEE, maxTimeoutSeconds: 60 };
const resource = { url: "https://api.example.com/report", description: "Market report", mimeType: "application/json" };
const authorization: AuthorizationPayload = {
  authorization: { from: PAYER, to: PAYEE, value: "10000", validAfter: "0", validBefore: "1900000000", nonce: `0x${"ab".repeat(32)}` },
};
const decoded = (value: string) => JSON.parse(Buffer.from(value, "base64").toString("utf8"));

describe("a one-tap payment's answer", () => {
  it("V2: kept without its signature until the person signs, then PAYMENT-SIGNATURE with the entry as offered", () => {
    const required = parsePaymentRequired({ x402Version: 2, resource, accepts: [{ ...entry, extra: { name: "USDC", version: "2" } }] });
    const unsigned = unsignedPayment(required, required.accepts[0], authorization);
    assert.deepEqual(unsigned.resource, { url: resource.url, description: "Market report" });
    assert.equal("signature" in unsigned.unsigned.payload, false, "nothing pretends to be signed before the person signs");
    const answer = x402PaymentValue(unsigned, "0x1234");
    assert.equal(answer.header, "PAYMENT-SIGNATURE");
    assert.deepEqual(decoded(answer.value), {
      x402Version: 2,
      resource,
      accepted: { ...entry, extra: { name: "USDC", version: "2" } },
      payload: { ...authorization, signature: "0x1234" },
    });
  });

  it("V1: X-PAYMENT with scheme, network and the signed authorization", () => {
    const { amount, ...v1 } = entry;
    const required = parsePaymentRequired({
      x402Version: 1,
      accepts: [{ ...v1, maxAmountRequired: amount, resource: resource.url, description: "", mimeType: "" }],
    });
    const answer = x402PaymentValue(unsignedPayment(required, required.accepts[0], authorization), "0x1234");
    assert.equal(answer.header, "X-PAYMENT");
    assert.deepEqual(decoded(answer.value), {
      x402Version: 1,
      scheme: "exact",
      network: "eip155:84532",
      payload: { ...authorization, signature: "0x1234" },
    });
  });
});
