import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { encodeFunctionData, erc20Abi, erc721Abi, maxUint256, parseAbi } from "viem";
import { decodeCall, isBatch, isUnlimitedAmount } from "./call-decoding";

const alice = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const bob = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const erc1155 = parseAbi([
  "function safeTransferFrom(address from, address to, uint256 id, uint256 value, bytes data)",
  "function safeBatchTransferFrom(address from, address to, uint256[] ids, uint256[] values, bytes data)",
]);

describe("decodeCall", () => {
  it("reads ERC-20 transfer, approve and transferFrom", () => {
    assert.deepEqual(decodeCall(encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [alice, 12_500_000n] })), {
      kind: "transfer",
      to: alice,
      amount: 12_500_000n,
    });
    assert.deepEqual(decodeCall(encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [bob, maxUint256] })), {
      kind: "approve",
      spender: bob,
      amount: maxUint256,
    });
    assert.deepEqual(decodeCall(encodeFunctionData({ abi: erc20Abi, functionName: "transferFrom", args: [alice, bob, 7n] })), {
      kind: "transferFrom",
      from: alice,
      to: bob,
      amount: 7n,
    });
  });

  it("reads both ERC-721 safeTransferFrom overloads and setApprovalForAll", () => {
    const expected = { kind: "safeTransferFrom", from: alice, to: bob, tokenId: 42n };
    assert.deepEqual(
      decodeCall(encodeFunctionData({ abi: erc721Abi, functionName: "safeTransferFrom", args: [alice, bob, 42n] })),
      expected,
    );
    assert.deepEqual(
      decodeCall(encodeFunctionData({ abi: erc721Abi, functionName: "safeTransferFrom", args: [alice, bob, 42n, "0x1234"] })),
      expected,
    );
    assert.deepEqual(decodeCall(encodeFunctionData({ abi: erc721Abi, functionName: "setApprovalForAll", args: [bob, true] })), {
      kind: "setApprovalForAll",
      operator: bob,
      approved: true,
    });
  });

  it("reads ERC-1155 safeTransferFrom and safeBatchTransferFrom", () => {
    assert.deepEqual(decodeCall(encodeFunctionData({ abi: erc1155, functionName: "safeTransferFrom", args: [alice, bob, 3n, 5n, "0x"] })), {
      kind: "safeTransferFrom1155",
      from: alice,
      to: bob,
      id: 3n,
      amount: 5n,
    });
    assert.deepEqual(
      decodeCall(
        encodeFunctionData({ abi: erc1155, functionName: "safeBatchTransferFrom", args: [alice, bob, [1n, 2n], [10n, 20n], "0x"] }),
      ),
      { kind: "safeBatchTransferFrom", from: alice, to: bob, ids: [1n, 2n], amounts: [10n, 20n] },
    );
  });

  it("reads increaseAllowance, ERC-677 transferAndCall and Permit2's approve (whose token is an argument)", () => {
    const extra = parseAbi([
      "function increaseAllowance(address spender, uint256 addedValue)",
      "function transferAndCall(address to, uint256 value, bytes data)",
      "function approve(address token, address spender, uint160 amount, uint48 expiration)",
    ]);
    assert.deepEqual(decodeCall(encodeFunctionData({ abi: extra, functionName: "increaseAllowance", args: [alice, 5n] })), {
      kind: "increaseAllowance",
      spender: alice,
      amount: 5n,
    });
    assert.deepEqual(decodeCall(encodeFunctionData({ abi: extra, functionName: "transferAndCall", args: [alice, 5n, "0x01"] })), {
      kind: "transferAndCall",
      to: alice,
      amount: 5n,
      data: "0x01",
    });
    assert.deepEqual(decodeCall(encodeFunctionData({ abi: extra, functionName: "approve", args: [bob, alice, 5n, 9] })), {
      kind: "permit2Approve",
      token: bob,
      spender: alice,
      amount: 5n,
      expiration: 9n,
    });
  });

  it("a multicall is decoded whole when every call in it is a token call, else it is an unknown batch", () => {
    const multicall = parseAbi(["function multicall(bytes[] data)", "function multicall(uint256 deadline, bytes[] data)"]);
    const transfer = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [alice, 1n] });
    const approve = encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [bob, 2n] });
    assert.deepEqual(decodeCall(encodeFunctionData({ abi: multicall, functionName: "multicall", args: [[transfer, approve]] })), {
      kind: "multicall",
      calls: [
        { kind: "transfer", to: alice, amount: 1n },
        { kind: "approve", spender: bob, amount: 2n },
      ],
    });
    const withDeadline = encodeFunctionData({ abi: multicall, functionName: "multicall", args: [9n, [transfer]] });
    assert.equal(decodeCall(withDeadline).kind, "multicall");
    const partly = encodeFunctionData({ abi: multicall, functionName: "multicall", args: [[transfer, "0xd0e30db0"]] });
    assert.equal(decodeCall(partly).kind, "unknown");
    assert.equal(isBatch(partly), true);
    const nested = encodeFunctionData({ abi: multicall, functionName: "multicall", args: [[withDeadline]] });
    assert.equal(decodeCall(nested).kind, "unknown");
    const aggregate3 = encodeFunctionData({
      abi: parseAbi(["function aggregate3((address target, bool allowFailure, bytes callData)[] calls)"]),
      args: [[{ target: alice, allowFailure: false, callData: transfer }]],
    });
    assert.equal(decodeCall(aggregate3).kind, "unknown");
    assert.equal(isBatch(aggregate3), true);
    assert.equal(isBatch(transfer), false);
  });

  it("no data is a plain transfer; anything else unrecognised is an unknown call with its selector and bytes", () => {
    assert.deepEqual(decodeCall("0x"), { kind: "none" });
    const deposit = "0xd0e30db0";
    assert.deepEqual(decodeCall(deposit), { kind: "unknown", selector: deposit, data: deposit });
    // A known selector whose arguments do not decode is not guessed at.
    const truncated = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [alice, 1n] }).slice(0, 50) as `0x${string}`;
    assert.deepEqual(decodeCall(truncated), { kind: "unknown", selector: "0xa9059cbb", data: truncated });
    // A read-only function sent as a transaction says nothing a person can approve.
    const balanceOf = encodeFunctionData({ abi: erc20Abi, functionName: "balanceOf", args: [alice] });
    assert.equal(decodeCall(balanceOf).kind, "unknown");
  });
});

describe("isUnlimitedAmount", () => {
  it("is true from 2^128 (Permit2's 2^(160−32) included), false below", () => {
    assert.equal(isUnlimitedAmount(maxUint256), true);
    assert.equal(isUnlimitedAmount(2n ** 160n - 1n), true);
    assert.equal(isUnlimitedAmount(2n ** 128n), true);
    assert.equal(isUnlimitedAmount(2n ** 128n - 1n), false);
    assert.equal(isUnlimitedAmount(1_000_000n), false);
  });
});
