import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { getAddress } from "viem";
import { paymentAnswer } from "./answer";
import { chainIdOf, chooseOffer, X402NotPayableError, type Payable } from "./choose";
import { parsePaymentRequired, resourceParts, X402RequirementError } from "./requirement";

const TOKEN = getAddress("0x036cbd53842c5426634e7929541ec2318f3dcf7e");
const PAYEE = getAddress("0x209693bc6afc0c5328ba36faf03c514ef312287c");
const FACILITATOR = getAddress("0x00000000000000000000000000000000000000fa");

const entry = (overrides: Record<string, unknown> = {}) => ({
  scheme: "exact",
  network: "eip155:84532",
  amount: "10000",
  asset: TOKEN,
  payTo: PAYEE,
  maxTimeoutSeconds: 60,
  extra: { name: "USDC", version: "2", assetTransferMethod: "erc7710", facilitatorAddresses: [FACILITATOR] },
  ...overrides,
});
const v2 = (accepts = [entry()]) => ({
  x402Version: 2,
  error: "Payment required",
  resource: { url: "https://api.example.com/report", description: "Market report", mimeType: "application/json" },
  accepts,
});
/** A V1 402 body of one entry (`maxAmountRequired`, the resource in the entry). */
const v1Body = (overrides: Record<string, unknown> = {}) => ({
  x402Version: 1,
  accepts: [
    {
      scheme: "exact",
      network: "eip155:84532",
      maxAmountRequired: "10000",
      resource: "https://api.example.com/v1",
      description: "",
      mimeType: "",
      payTo: PAYEE,
      maxTimeoutSeconds: 60,
      asset: TOKEN,
      extra: { assetTransferMethod: "erc7710", facilitatorAddresses: [FACILITATOR] },
      ...overrides,
    },
  ],
});
const header = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64");
const payable: Payable[] = [{ allowanceId: "al_1", delegationHash: "0x01", chainId: 84532, token: TOKEN, payees: [PAYEE] }];

describe("x402 requirements", () => {
  it("reads a V2 PAYMENT-REQUIRED header value and a V1 body alike", () => {
    const fromHeader = parsePaymentRequired(header(v2()));
    assert.equal(fromHeader.version, 2);
    assert.deepEqual(fromHeader.resource, { url: "https://api.example.com/report", description: "Market report" });
    assert.equal(fromHeader.accepts[0].amount, "10000");

    const body = v1Body({ description: "V1 report", mimeType: "application/json" });
    for (const given of [body, JSON.stringify(body)]) {
      const v1 = parsePaymentRequired(given);
      assert.equal(v1.version, 1);
      assert.deepEqual(v1.resource, { url: "https://api.example.com/v1", description: "V1 report" });
      assert.equal(v1.accepts[0].amount, "10000");
    }
  });

  it("refuses what is not a requirement, naming the field", () => {
    const refused = (given: unknown, pattern: RegExp) =>
      assert.throws(
        () => parsePaymentRequired(given),
        (error: unknown) => error instanceof X402RequirementError && pattern.test(error.message),
      );
    refused("not base64!", /neither base64/);
    refused(header({ x402Version: 3 }), /x402Version 1 or 2/);
    refused(header(v2([entry({ amount: "0.01" })])), /accepts\.0\.amount must be an amount in the asset's smallest unit/);
    refused(header(v2([entry({ payTo: "0x12" })])), /accepts\.0\.payTo must be a 0x-prefixed/);
    // no uint256 holds it: refused as the requirement it is, not failing when the payment is encoded
    refused(header(v2([entry({ amount: (2n ** 256n).toString() })])), /accepts\.0\.amount must be less than 2\^256/);
    assert.equal(
      parsePaymentRequired(header(v2([entry({ amount: (2n ** 256n - 1n).toString() })]))).accepts[0].amount,
      String(2n ** 256n - 1n),
    );
    refused(header({ ...v2(), surprise: true }), /Unrecognized key/);
    refused(header(v2([])), /must offer at least one way to pay/);
    // what it pays for is shown to the person as a host and a path: a resource that is no URL is not paid
    for (const url of ["Today's weather report", "/report", "urn:isbn:123"])
      refused(header({ ...v2(), resource: { url } }), /resource\.url must be the resource's URL/);
    refused(v1Body({ resource: "weather" }), /accepts\.0\.resource must be the resource's URL/);
    assert.deepEqual(resourceParts("https://api.example.com:8443/v1/report?city=Porto"), {
      host: "api.example.com:8443",
      path: "/v1/report?city=Porto",
    });
    assert.deepEqual(resourceParts("mcp://paid-weather/tools/forecast"), { host: "paid-weather", path: "/tools/forecast" });
  });
});

describe("choosing what to pay", () => {
  const offers = (accepts: Record<string, unknown>[]) => parsePaymentRequired(header(v2(accepts as never))).accepts;

  it("picks the cheapest entry an allowance covers, with its facilitators as redeemers", () => {
    const choice = chooseOffer(offers([entry({ amount: "20000" }), entry(), entry({ scheme: "upto" })]), [84532], payable);
    assert.equal(choice.amount, 10_000n);
    assert.equal(choice.chainId, 84532);
    assert.deepEqual(choice.redeemers, [FACILITATOR]);
    assert.equal(choice.allowanceId, "al_1");
  });

  it("says why each entry cannot be paid", () => {
    const refused = (accepts: Record<string, unknown>[], pattern: RegExp, configured = [84532]) =>
      assert.throws(
        () => chooseOffer(offers(accepts), configured, payable),
        (error: unknown) => error instanceof X402NotPayableError && pattern.test(error.message),
      );
    refused([entry({ network: "solana:mainnet" })], /the network "solana:mainnet"/);
    refused([entry({ network: "eip155:1" })], /chain 1, which this wallet service does not use/);
    refused([entry({ network: "eip155:1" })], /chain 1, where no live allowance/, [1, 84532]);
    refused([entry({ extra: { assetTransferMethod: "eip3009" } })], /by eip3009 \(within an allowance Agent Wallet pays by erc7710\)/);
    refused([entry({ extra: { assetTransferMethod: "erc7710" } })], /without facilitatorAddresses/);
    refused([entry({ asset: PAYEE })], /no allowance of this grant covers/);
    refused([entry({ payTo: TOKEN })], /is not among the allowance's recipients/);
  });

  it("an any-payee allowance pays every payee up to its most per payment, and refuses above it naming that most", () => {
    const anyone: Payable[] = [
      { allowanceId: "al_any", delegationHash: "0x02", chainId: 84532, token: TOKEN, payees: [], anyPayeeUpTo: 10_000n },
    ];
    for (const payTo of [PAYEE, FACILITATOR]) assert.equal(chooseOffer(offers([entry({ payTo })]), [84532], anyone).payee, payTo);
    assert.throws(
      () => chooseOffer(offers([entry({ amount: "10001" })]), [84532], anyone),
      (error: unknown) =>
        error instanceof X402NotPayableError &&
        error.message.includes(
          `a payment of 10001 base units of ${TOKEN}, above the most the allowance pays any payee at once (10000 base units)`,
        ),
    );
    // the cheaper entry within the most is chosen over one above it
    assert.equal(chooseOffer(offers([entry({ amount: "20000" }), entry({ amount: "9000" })]), [84532], anyone).amount, 9_000n);
  });

  it("reads V1's named networks as @x402/evm maps them, and CAIP-2 in V1 too, and answers with the name given", () => {
    const v1 = (network: string) => parsePaymentRequired(v1Body({ network })).accepts;
    for (const [name, chainId] of [
      ["base-sepolia", 84532],
      ["base", 8453],
      ["avalanche-fuji", 43113],
      ["polygon-amoy", 80002],
      ["eip155:31337", 31337],
    ] as const) {
      const choice = chooseOffer(v1(name), [chainId], [{ ...payable[0], chainId }]);
      assert.equal(choice.chainId, chainId, name);
      assert.equal(choice.offer.network, `eip155:${chainId}`);
      // X-PAYMENT names the network as the requirement did
      const required = { version: 1 as const, resource: { url: "https://api.example.com/v1", description: null }, accepts: [choice.offer] };
      const sent = paymentAnswer(required, choice.offer, { delegationManager: FACILITATOR, permissionContext: "0x12", delegator: PAYEE });
      assert.equal(JSON.parse(Buffer.from(sent.value, "base64").toString("utf8")).network, name);
    }
    // a name @x402/evm does not map, or another namespace's, is refused naming it as it came
    for (const name of ["solana-devnet", "toString", "base-mainnet"])
      assert.throws(
        () => chooseOffer(v1(name), [84532], payable),
        (error: unknown) => error instanceof X402NotPayableError && error.message.includes(`the network "${name}"`),
      );
  });

  it("reads CAIP-2 eip155 networks only", () => {
    assert.equal(chainIdOf("eip155:8453"), 8453);
    assert.equal(chainIdOf("eip155:08453"), null);
    assert.equal(chainIdOf("base-sepolia"), null);
  });
});

describe("the answer", () => {
  const payload = { delegationManager: FACILITATOR, permissionContext: "0x1234" as const, delegator: PAYEE };

  it("V2: PAYMENT-SIGNATURE carries the accepted entry exactly as offered, and the resource", () => {
    const required = parsePaymentRequired(header(v2()));
    const answer = paymentAnswer(required, required.accepts[0], payload);
    assert.equal(answer.header, "PAYMENT-SIGNATURE");
    const sent = JSON.parse(Buffer.from(answer.value, "base64").toString("utf8"));
    assert.deepEqual(sent, { x402Version: 2, resource: v2().resource, accepted: entry(), payload });
  });

  it("V1: X-PAYMENT carries scheme, network and payload", () => {
    const v1 = parsePaymentRequired(v1Body({ maxAmountRequired: "1", extra: undefined }));
    const answer = paymentAnswer(v1, v1.accepts[0], payload);
    assert.equal(answer.header, "X-PAYMENT");
    assert.deepEqual(JSON.parse(Buffer.from(answer.value, "base64").toString("utf8")), {
      x402Version: 1,
      scheme: "exact",
      network: "eip155:84532",
      payload,
    });
  });
});
