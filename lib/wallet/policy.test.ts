import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { encodeFunctionData, erc20Abi, parseEther } from "viem";
import { factsOf, violationOf } from "./policy";
import type { PreparedTransaction } from "./request-payload";

const NOW = new Date("2026-06-01T12:00:00Z");
const TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const FRIEND = "0x000000000000000000000000000000000000bEEF";
const hoursAgo = (hours: number) => new Date(NOW.getTime() - hours * 3_600_000);

function transaction(overrides: Partial<PreparedTransaction>) {
  const prepared: PreparedTransaction = {
    type: "eip1559",
    chainId: 31337,
    to: FRIEND,
    value: "0",
    data: "0x",
    nonce: 0,
    gas: "21000",
    maxFeePerGas: "1",
    maxPriorityFeePerGas: "1",
    ...overrides,
  };
  return factsOf({ kind: "send_transaction", transaction: prepared });
}
const tokenTransfer = (amount: bigint) =>
  transaction({ to: TOKEN, data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [FRIEND, amount] }) });
const held = (createdAt: Date, fields: { nativeValue?: string; tokenAmount?: string }) => ({
  createdAt,
  chainId: 31337,
  nativeValue: fields.nativeValue ?? "0",
  tokenAddress: fields.tokenAmount ? TOKEN : null,
  tokenAmount: fields.tokenAmount ?? null,
});

describe("spending policy rules", () => {
  it("a token transfer is its recipient and its amount on the token contract", () => {
    const facts = tokenTransfer(5n);
    assert.equal(facts.counterparty, FRIEND);
    assert.equal(facts.contract, TOKEN);
    assert.equal(facts.tokenAmount, 5n);
    assert.equal(facts.selector, "0xa9059cbb");
  });

  it("token caps per transaction and per rolling day count only that token, within the day", () => {
    const policy = { tokens: [{ chain_id: 31337, token: TOKEN.toLowerCase(), per_transaction: "100", per_day: "150" }] };
    assert.equal(violationOf(policy, tokenTransfer(101n), [], 0, NOW)?.rule, "tokens.per_transaction");
    const earlier = [held(hoursAgo(2), { tokenAmount: "100" }), held(hoursAgo(30), { tokenAmount: "100" })];
    const breach = violationOf(policy, tokenTransfer(60n), earlier, 0, NOW);
    assert.equal(breach?.rule, "tokens.per_day");
    assert.deepEqual(breach?.allowance, { limit: "150", remaining: "50" });
    assert.equal(violationOf(policy, tokenTransfer(50n), earlier, 0, NOW), null);
  });

  it("the weekly native cap counts seven days back; a plain transfer's recipient is its to", () => {
    const policy = { native: { per_week: String(parseEther("1")) }, recipients: [FRIEND] };
    const earlier = [
      held(hoursAgo(24 * 6), { nativeValue: String(parseEther("0.9")) }),
      held(hoursAgo(24 * 8), { nativeValue: String(parseEther("5")) }),
    ];
    assert.equal(violationOf(policy, transaction({ value: String(parseEther("0.2")) }), earlier, 0, NOW)?.rule, "native.per_week");
    assert.equal(violationOf(policy, transaction({ value: String(parseEther("0.1")) }), earlier, 0, NOW), null);
  });

  it("typed data is held to its domain's verifying contract and name", () => {
    const facts = factsOf({
      kind: "sign_typed_data",
      typedData: {
        domain: { name: "Shop", verifyingContract: TOKEN },
        types: { Order: [{ name: "id", type: "uint256" }] },
        primaryType: "Order",
        message: { id: 1n },
      },
    });
    assert.equal(violationOf({ typed_data: { verifying_contracts: [TOKEN.toLowerCase()], names: ["Shop"] } }, facts, [], 0, NOW), null);
    assert.equal(violationOf({ typed_data: { names: ["Market"] } }, facts, [], 0, NOW)?.rule, "typed_data.names");
    assert.equal(violationOf({ typed_data: { verifying_contracts: [FRIEND] } }, facts, [], 0, NOW)?.rule, "typed_data.verifying_contracts");
  });
});
