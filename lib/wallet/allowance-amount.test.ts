import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { encodeFunctionData, erc20Abi, erc721Abi, maxUint256, parseAbi, type TypedDataDefinition } from "viem";
import { allowanceAmount, AllowanceAmountError, withAllowanceAmount } from "./allowance-amount";
import type { PreparedTransaction, RequestPayload } from "./request-payload";
import { eip2612Permit } from "./permit.fixture";

const TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const SPENDER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const PERMIT2 = "0x000000000022D473030F116dDEE9F6B43aC78BA3";
const permit2Abi = parseAbi(["function approve(address token, address spender, uint160 amount, uint48 expiration)"]);

const send = (to: `0x${string}`, data: `0x${string}`): RequestPayload => ({
  kind: "send_transaction",
  transaction: {
    type: "eip1559",
    chainId: 31337,
    to,
    value: "0",
    data,
    nonce: 4,
    gas: "60000",
    maxFeePerGas: "2000000000",
    maxPriorityFeePerGas: "1000000000",
  } satisfies PreparedTransaction,
});
const approve = (amount: bigint) => encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [SPENDER, amount] });

const permit = (value: string): RequestPayload => ({
  kind: "sign_typed_data",
  typedData: eip2612Permit({ token: TOKEN, owner: SPENDER, spender: SPENDER, value }) as unknown as TypedDataDefinition,
});

describe("lowering an allowance's amount before signing", () => {
  it("an ERC-20 approve: only the amount of the calldata changes, every other field stays", () => {
    const asked = send(TOKEN, approve(maxUint256));
    assert.deepEqual(allowanceAmount(asked), { amount: maxUint256, token: TOKEN, chainId: 31337 });
    const lowered = withAllowanceAmount(asked, 100n);
    assert.equal(lowered.kind === "send_transaction" && lowered.transaction.data, approve(100n));
    assert.deepEqual(
      { ...(lowered as typeof asked & { kind: "send_transaction" }).transaction, data: "" },
      {
        ...(asked as typeof asked & { kind: "send_transaction" }).transaction,
        data: "",
      },
    );
  });

  it("Permit2's approve keeps its token, spender and expiration", () => {
    const data = encodeFunctionData({ abi: permit2Abi, functionName: "approve", args: [TOKEN, SPENDER, 2n ** 160n - 1n, 1900000000] });
    const asked = send(PERMIT2, data);
    assert.deepEqual(allowanceAmount(asked), { amount: 2n ** 160n - 1n, token: TOKEN, chainId: 31337 });
    const lowered = withAllowanceAmount(asked, 5n);
    const expected = encodeFunctionData({ abi: permit2Abi, functionName: "approve", args: [TOKEN, SPENDER, 5n, 1900000000] });
    assert.equal(lowered.kind === "send_transaction" && lowered.transaction.data, expected);
  });

  it("an EIP-2612 permit: only message.value changes", () => {
    const lowered = withAllowanceAmount(permit(maxUint256.toString()), 7n);
    assert.deepEqual(lowered, permit("7"));
  });

  it("refuses an amount that is not lower, and requests with nothing to lower", () => {
    const asked = send(TOKEN, approve(100n));
    assert.throws(() => withAllowanceAmount(asked, 100n), AllowanceAmountError);
    assert.throws(() => withAllowanceAmount(asked, 101n), AllowanceAmountError);
    assert.throws(() => withAllowanceAmount(asked, -1n), AllowanceAmountError);
    assert.equal(withAllowanceAmount(asked, 0n).kind, "send_transaction");
    const transfer = send(TOKEN, encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [SPENDER, 5n] }));
    assert.equal(allowanceAmount(transfer), null);
    assert.throws(() => withAllowanceAmount(transfer, 1n), AllowanceAmountError);
    assert.equal(allowanceAmount({ kind: "sign_message", message: "hi" }), null);
    // Trailing bytes after the arguments: the rebuilt call would differ in more than its amount.
    assert.equal(allowanceAmount(send(TOKEN, `${approve(100n)}00`)), null);
    // ERC-721's approve has the same selector: the token id is the "amount" here; the server asks the token (ERC-20 only).
    const nft = encodeFunctionData({ abi: erc721Abi, functionName: "approve", args: [SPENDER, 3n] });
    assert.equal(allowanceAmount(send(TOKEN, nft))?.amount, 3n);
  });
});
