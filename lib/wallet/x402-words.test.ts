// The approval page's words for a one-tap x402 payment (pay_x402 with an approve credential): the amount, token and
// payee read from the signed TransferWithAuthorization (or Permit2 witness transfer through x402's proxy), and only what
// it pays for from the resource.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TypedDataDefinition } from "viem";
import { address, testFramework } from "@/lib/allowances/framework.fixture";
import { headlineOf } from "@/lib/wallet/headline";
import { x402Permit2TypedData, X402_EXACT_PERMIT2_PROXY } from "./permits";
import { describePayload } from "./request-description";
import type { RequestPayload, X402Context } from "./request-payload";

process.env.DATA_DIR = fs.mkdtempSync(path.join(os.tmpdir(), "aw-x402-words-"));
after(() => fs.rmSync(process.env.DATA_DIR!, { recursive: true, force: true }));

const WALLET = address(0xaaaa);
const PAYEE = address(0xbeef);
const USDC = address(0xdddd);
const lookup = async () => ({ standard: "erc20", symbol: "USDC", decimals: 6 }) as const;

const authorization: TypedDataDefinition = {
  domain: { name: "USD Coin", version: "2", chainId: 31337, verifyingContract: USDC },
  types: {
    TransferWithAuthorization: [
      { name: "from", type: "address" },
      { name: "to", type: "address" },
      { name: "value", type: "uint256" },
      { name: "validAfter", type: "uint256" },
      { name: "validBefore", type: "uint256" },
      { name: "nonce", type: "bytes32" },
    ],
  },
  primaryType: "TransferWithAuthorization",
  message: { from: WALLET, to: PAYEE, value: "10000", validAfter: "0", validBefore: "1900000000", nonce: `0x${"ab".repeat(32)}` },
} as unknown as TypedDataDefinition;

const x402 = (url: string): X402Context => ({
  resource: { url, description: "Market report" },
  header: "PAYMENT-SIGNATURE",
  unsigned: { x402Version: 2, payload: {} },
});
const headline = async (payload: RequestPayload) =>
  headlineOf({ ...(await describePayload(payload, lookup, () => testFramework)), unavailable: [] }, "Main", {});

describe("a one-tap x402 payment in words", () => {
  it("“Pay 0.01 USDC to <payee> for <resource>”, the amount and payee as the authorization signs them", async () => {
    const payload: RequestPayload = { kind: "sign_typed_data", typedData: authorization, x402: x402("https://api.example.com/report") };
    const described = await describePayload(payload, lookup, () => testFramework);
    assert.deepEqual(described.kind === "sign_typed_data" && described.payment, {
      amount: "0.01 USDC",
      payee: PAYEE,
      resource: { url: "https://api.example.com/report", description: "Market report" },
    });
    assert.equal(await headline(payload), `Pay 0.01 USDC to ${PAYEE.slice(0, 6)}…${PAYEE.slice(-4)} for https://api.example.com/report`);
  });

  it("hidden characters in the resource's address are shown; the same authorization without x402 stays a transfer", async () => {
    const hidden = await headline({
      kind: "sign_typed_data",
      typedData: authorization,
      x402: x402("https://api.example.com/\u202ereport"),
    });
    assert.doesNotMatch(hidden, /\u202e/);
    assert.match(hidden, /^Pay 0\.01 USDC to /);
    assert.equal(
      await headline({ kind: "sign_typed_data", typedData: authorization }),
      `Transfer 0.01 USDC to ${PAYEE.slice(0, 6)}…${PAYEE.slice(-4)} — by signature, no transaction`,
    );
  });

  it("a Permit2 payment through x402's proxy reads the same: its witness's payee, the proxy only as how it is paid", async () => {
    const permit2 = x402Permit2TypedData({
      chainId: 31337,
      token: USDC,
      amount: 10_000n,
      payee: PAYEE,
      nonce: 7n,
      deadline: 1_900_000_000n,
    });
    const typedData = permit2 as unknown as TypedDataDefinition;
    const payload: RequestPayload = { kind: "sign_typed_data", typedData, x402: x402("https://api.example.com/report") };
    const described = await describePayload(payload, lookup, () => testFramework);
    assert.ok(described.kind === "sign_typed_data");
    assert.deepEqual(described.payment, {
      amount: "0.01 USDC",
      payee: PAYEE,
      resource: { url: "https://api.example.com/report", description: "Market report" },
    });
    assert.equal(described.permit?.action, "Transfer 0.01 USDC");
    assert.deepEqual(described.permit?.details.slice(0, 2), [
      { label: "Recipient", address: PAYEE },
      { label: "Paid through", text: "x402's Permit2 payment contract", address: X402_EXACT_PERMIT2_PROXY },
    ]);
    assert.equal(await headline(payload), `Pay 0.01 USDC to ${PAYEE.slice(0, 6)}…${PAYEE.slice(-4)} for https://api.example.com/report`);
    assert.equal(
      await headline({ kind: "sign_typed_data", typedData }),
      `Transfer 0.01 USDC to ${PAYEE.slice(0, 6)}…${PAYEE.slice(-4)} — by signature, no transaction`,
    );
  });
});
