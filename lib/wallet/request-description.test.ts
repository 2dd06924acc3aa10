import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { encodeFunctionData, erc20Abi, parseEther, parseUnits, type TypedDataDefinition } from "viem";
import { address, preparedAllowance, testFramework } from "@/lib/allowances/framework.fixture";
import { describePayload, type Detail } from "./request-description";
import type { RequestPayload } from "./request-payload";
import {
  delegationTypedData,
  execute,
  handleOpsCall,
  mode,
  preparedTransaction,
  userOperationTypedData,
} from "@/lib/allowances/deleGator.fixture";

// The default chain (31337, ETH); the service's secrets in a folder of this test's own.
process.env.DATA_DIR = fs.mkdtempSync(path.join(os.tmpdir(), "aw-describe-"));
after(() => fs.rmSync(process.env.DATA_DIR!, { recursive: true, force: true }));

const WALLET = address(0xaaaa);
const TAKER = address(0xbeef);
const TOKEN = address(0xdddd);
const lookup = async () => ({ standard: "erc20", symbol: "TST", decimals: 18 }) as const;
const describe_ = (payload: RequestPayload) => describePayload(payload, lookup, () => testFramework);
const toSelf = (data: `0x${string}`) => preparedTransaction(WALLET, data);
const signing = (typedData: TypedDataDefinition): RequestPayload => ({ kind: "sign_typed_data", typedData });
const texts = (details: Detail[]) => details.map((detail) => `${detail.label}: ${detail.text ?? detail.address}`);

describe("the approval page's words for what the DeleGator runs", () => {
  it("execute(single, (taker, 0.01 ETH, 0x)) to the wallet itself: a send of 0.01 ETH from the wallet, not an unknown call", async () => {
    const described = await describe_(toSelf(execute([{ target: TAKER, value: parseEther("0.01"), callData: "0x" }])));
    assert.equal(described.kind === "send_transaction" && described.call.kind, "executions");
    const call = described.kind === "send_transaction" && described.call.kind === "executions" ? described.call : null;
    assert.equal(call?.sends, String(parseEther("0.01")));
    assert.deepEqual(call?.runs.length, 1);
    const [run] = call!.runs;
    assert.equal(run.delegator, null, "run from the wallet itself");
    assert.equal(run.calls[0].action, "Send 0.01 ETH");
    assert.deepEqual(texts(run.calls[0].details), ["Amount: 0.01 ETH", `Recipient: ${TAKER}`]);
  });

  it("a batch: each call as a transaction's would be, an unlimited approval flagged; a shape it cannot read says why", async () => {
    const approve = encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [TAKER, 2n ** 255n] });
    const transfer = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [TAKER, parseUnits("5", 18)] });
    const batch = await describe_(
      toSelf(
        execute([
          { target: TOKEN, value: 0n, callData: transfer },
          { target: TOKEN, value: 0n, callData: approve },
        ]),
      ),
    );
    const call = batch.kind === "send_transaction" && batch.call.kind === "executions" ? batch.call : null;
    assert.deepEqual(
      call?.runs[0].calls.map((entry) => entry.action),
      ["Transfer 5 TST", "Allow spending of unlimited TST"],
    );
    assert.equal(call?.unlimited, true);
    const tried = await describe_(toSelf(execute([{ target: TAKER, value: 1n, callData: "0x" }], mode("00", "01"))));
    assert.match((tried.kind === "send_transaction" && tried.call.kind === "executions" && tried.call.unreadable) || "", /try mode/);
  });

  it("a Delegation without caveats: full control of this wallet's funds, in a danger warning", async () => {
    const described = await describe_(signing(delegationTypedData(testFramework, { delegate: TAKER, delegator: WALLET, caveats: [] })));
    const delegation = described.kind === "sign_typed_data" ? described.delegation : null;
    assert.equal(delegation?.action, "Delegate full control of your wallet");
    assert.match(delegation?.warning ?? "", new RegExp(`^No caveats: this gives ${TAKER} full control of this wallet's funds`));
    assert.equal(delegation?.unlimited, true);
    assert.equal(delegation?.details[0].address, TAKER);
  });

  it("a Delegation's caveats in words, by their enforcers, and the most it could ever move", async () => {
    const [coin] = preparedAllowance(WALLET).delegations;
    const described = await describe_(
      signing(delegationTypedData(testFramework, { delegate: TAKER, delegator: WALLET, caveats: coin.caveats })),
    );
    const delegation = described.kind === "sign_typed_data" ? described.delegation : null;
    assert.equal(delegation?.action, "Delegate use of your wallet, limited by 5 caveats");
    assert.equal(delegation?.warning, null);
    assert.deepEqual(texts(delegation!.details).slice(3), [
      `Limit (AllowedTargetsEnforcer): only calls to ${address(0xcccc)}`,
      "Limit (ExactCalldataEnforcer): only plain transfers, no call data",
      "Limit (NativeTokenPeriodTransferEnforcer): up to 0.01 ETH a day, periods counted from 2026-11-25 14:05 UTC",
      "Limit (TimestampEnforcer): until 2026-12-02 14:05 UTC",
      "Limit (LimitedCallsEnforcer): at most 3 calls",
      "Most ETH it could ever move: 0.03 ETH",
      "Most tokens it could ever move: no tokens",
    ]);
  });

  it("a user operation: its calls from the wallet, and the most it pays for gas", async () => {
    const run = execute([{ target: TAKER, value: parseEther("0.01"), callData: "0x" }]);
    const described = await describe_(signing(userOperationTypedData(testFramework, WALLET, run)));
    const operation = described.kind === "sign_typed_data" ? described.operation : null;
    assert.equal(operation?.runs[0].calls[0].action, "Send 0.01 ETH");
    assert.ok(texts(operation!.details).includes("Most it pays for gas, from this wallet: 0.00029 ETH"));
  });

  it("a signed user operation handed to the EntryPoint (handleOps): what it runs and its gas, not an unknown call", async () => {
    const run = execute([{ target: TAKER, value: parseEther("0.01"), callData: "0x" }]);
    const beneficiary = address(0xb0b0);
    const described = await describe_(preparedTransaction(testFramework.EntryPoint, handleOpsCall(WALLET, run, beneficiary)));
    const call = described.kind === "send_transaction" && described.call.kind === "decoded" ? described.call : null;
    assert.equal(call?.action, `Submit 1 signed user operation to the EntryPoint: ${WALLET} runs Send 0.01 ETH`);
    assert.deepEqual(texts(call!.details), [
      "Runs: Send 0.01 ETH",
      "Amount: 0.01 ETH",
      `Recipient: ${TAKER}`,
      `Runs as the account: ${WALLET}`,
      `EntryPoint: ${testFramework.EntryPoint}`,
      "Most it pays for gas, from its account: 0.00029 ETH",
      "Nonce: 0",
      `Gas refund paid to: ${beneficiary}`,
    ]);
    assert.equal(call?.warning, null);
    const unreadable = await describe_(
      preparedTransaction(
        testFramework.EntryPoint,
        handleOpsCall(WALLET, execute([{ target: TAKER, value: 1n, callData: "0x" }], mode("ff")), beneficiary),
      ),
    );
    const warned = unreadable.kind === "send_transaction" && unreadable.call.kind === "decoded" ? unreadable.call : null;
    assert.match(warned?.warning ?? "", /cannot all be read \(operation 1: execute: it runs code by delegatecall/);
  });
});

describe("typed data's numbers in words, in any struct", () => {
  const USDC = address(0x0c0c);
  const WETH = address(0x0e0e);
  const byAddress: Record<string, { standard: "erc20"; symbol: string; decimals: number }> = {
    [USDC.toLowerCase()]: { standard: "erc20", symbol: "USDC", decimals: 6 },
    [WETH.toLowerCase()]: { standard: "erc20", symbol: "WETH", decimals: 18 },
  };
  const tokens = async (_chainId: number, at: `0x${string}`) => byAddress[at.toLowerCase()] ?? ({ standard: "unknown" } as const);
  const fields = async (types: Record<string, { name: string; type: string }[]>, primaryType: string, message: object) => {
    const described = await describePayload(
      signing({ domain: { name: "Swap", chainId: 31337 }, types, primaryType, message } as unknown as TypedDataDefinition),
      tokens,
      () => null,
    );
    if (described.kind !== "sign_typed_data") throw new Error("typed data");
    return Object.fromEntries(described.fields.flatMap((field) => ("value" in field ? [[field.name, field.inWords ?? null]] : [])));
  };
  const at = 1_900_000_000;
  const date = new Date(at * 1000).toISOString().replace("T", " ").replace(".000Z", " UTC");

  it("each amount in the units of the token it pairs with by name, a deadline as a date, a nonce and a count raw", async () => {
    const shown = await fields(
      {
        Order: [
          { name: "tokenIn", type: "address" },
          { name: "tokenOut", type: "address" },
          { name: "amountIn", type: "uint256" },
          { name: "amountOut", type: "uint256" },
          { name: "deadline", type: "uint256" },
          { name: "nonce", type: "uint256" },
          { name: "fills", type: "uint32" },
        ],
      },
      "Order",
      {
        tokenIn: USDC,
        tokenOut: WETH,
        amountIn: "2500000",
        amountOut: "1000000000000000",
        deadline: String(at),
        nonce: String(at),
        fills: "3",
      },
    );
    assert.equal(shown.amountIn, "2.5 USDC");
    assert.equal(shown.amountOut, "0.001 WETH");
    assert.match(shown.deadline!, new RegExp(`^${date} \\(`));
    assert.equal(shown.nonce, null, "a nonce is no moment, whatever its size");
    assert.equal(shown.fills, null);
  });

  it("an amount that could be in either of two tokens is not guessed; one beside a single token is in its units", async () => {
    const two = await fields(
      {
        Order: [
          { name: "makerAsset", type: "address" },
          { name: "takerAsset", type: "address" },
          { name: "amount", type: "uint256" },
        ],
      },
      "Order",
      { makerAsset: USDC, takerAsset: WETH, amount: "1000000" },
    );
    assert.equal(two.amount, null);
    const one = await fields(
      {
        Order: [
          { name: "makerAsset", type: "address" },
          { name: "makerAmount", type: "uint256" },
          { name: "takerAmount", type: "uint256" },
        ],
      },
      "Order",
      { makerAsset: USDC, makerAmount: "1000000", takerAmount: "5" },
    );
    assert.equal(one.makerAmount, "1 USDC");
    assert.equal(one.takerAmount, null, "a taker's amount is not in the maker's token");
  });
});
