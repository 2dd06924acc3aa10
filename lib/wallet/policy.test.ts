import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { encodeFunctionData, erc20Abi, parseAbi, parseEther, type TypedDataDefinition } from "viem";
import { preparedAllowance, testFramework } from "@/lib/allowances/framework.fixture";
import { x402Permit2TypedData } from "./permits";
import { factsOf, violationOf } from "./policy";
import { delegationTypedData, execute, mode, userOperationTypedData } from "@/lib/allowances/deleGator.fixture";
import type { PreparedTransaction } from "./request-payload";

const NOW = new Date("2026-06-01T12:00:00Z");
const TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const FRIEND = "0x000000000000000000000000000000000000bEEF";
const OTHER_TOKEN = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512";
const SPENDER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const PERMIT2 = "0x000000000022D473030F116dDEE9F6B43aC78BA3";
const TAKER = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC" as const;
const field = (entry: string) => ({ name: entry.split(":")[0], type: entry.split(":")[1] });
const hoursAgo = (hours: number) => new Date(NOW.getTime() - hours * 3_600_000);
const noFramework = () => null;

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
  return factsOf({ kind: "send_transaction", transaction: prepared }, noFramework);
}
const tokenTransfer = (amount: bigint) =>
  transaction({ to: TOKEN, data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [FRIEND, amount] }) });
const held = (createdAt: Date, fields: { nativeValue?: string; tokenAmount?: string; chainId?: number }) => ({
  createdAt,
  chainId: fields.chainId ?? 31337,
  nativeValue: fields.nativeValue ?? "0",
  tokenAddress: fields.tokenAmount ? TOKEN : null,
  tokenAmount: fields.tokenAmount ?? null,
});

describe("spending policy rules", () => {
  it("a token transfer is its recipient and its amount on the token contract", () => {
    const facts = tokenTransfer(5n);
    assert.deepEqual(facts.counterparties, [FRIEND]);
    assert.deepEqual(facts.calls, [{ contract: TOKEN, selector: "0xa9059cbb", readable: true }]);
    assert.deepEqual(facts.tokens, [{ chainId: 31337, token: TOKEN, amount: 5n }]);
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
    const facts = factsOf(
      {
        kind: "sign_typed_data",
        typedData: {
          domain: { name: "Shop", verifyingContract: TOKEN },
          types: { Order: [{ name: "id", type: "uint256" }] },
          primaryType: "Order",
          message: { id: 1n },
        },
      },
      noFramework,
    );
    assert.equal(violationOf({ typed_data: { verifying_contracts: [TOKEN.toLowerCase()], names: ["Shop"] } }, facts, [], 0, NOW), null);
    assert.equal(violationOf({ typed_data: { names: ["Market"] } }, facts, [], 0, NOW)?.rule, "typed_data.names");
    assert.equal(violationOf({ typed_data: { verifying_contracts: [FRIEND] } }, facts, [], 0, NOW)?.rule, "typed_data.verifying_contracts");
  });

  const permit = (primaryType: "Permit" | "PermitBatchTransferFrom", amounts: [string, bigint][]) =>
    factsOf(
      {
        kind: "sign_typed_data",
        typedData:
          primaryType === "Permit"
            ? {
                domain: { name: "Token", version: "1", chainId: 31337, verifyingContract: amounts[0][0] as `0x${string}` },
                types: {
                  Permit: ["owner:address", "spender:address", "value:uint256", "nonce:uint256", "deadline:uint256"].map(field),
                },
                primaryType,
                message: { owner: FRIEND, spender: SPENDER, value: amounts[0][1], nonce: 0n, deadline: 1n },
              }
            : {
                domain: { name: "Permit2", chainId: 31337, verifyingContract: PERMIT2 },
                types: {
                  PermitBatchTransferFrom: ["permitted:TokenPermissions[]", "spender:address", "nonce:uint256", "deadline:uint256"].map(
                    field,
                  ),
                  TokenPermissions: ["token:address", "amount:uint256"].map(field),
                },
                primaryType,
                message: { permitted: amounts.map(([token, amount]) => ({ token, amount })), spender: SPENDER, nonce: 0n, deadline: 1n },
              },
      },
      noFramework,
    );

  it("a permit's amounts count under the token caps of the domain's chain, like an approve", () => {
    const policy = { tokens: [{ chain_id: 31337, token: TOKEN, per_transaction: "100", per_day: "150" }] };
    const facts = permit("Permit", [[TOKEN, 101n]]);
    assert.deepEqual(facts.tokens, [{ chainId: 31337, token: TOKEN, amount: 101n }]);
    assert.deepEqual(facts.counterparties, [SPENDER]);
    assert.equal(violationOf(policy, facts, [], 0, NOW)?.rule, "tokens.per_transaction");
    const earlier = [held(hoursAgo(1), { tokenAmount: "100" })];
    assert.equal(violationOf(policy, permit("Permit", [[TOKEN, 60n]]), earlier, 0, NOW)?.rule, "tokens.per_day");
    assert.equal(violationOf(policy, permit("Permit", [[TOKEN, 50n]]), earlier, 0, NOW), null);
  });

  it("an x402 Permit2 payment is a payment to its payee: the recipients rule judges the payee, not x402's proxy", () => {
    const typedData = x402Permit2TypedData({ chainId: 31337, token: TOKEN, amount: 40n, payee: FRIEND, nonce: 1n, deadline: 9n });
    const facts = factsOf({ kind: "sign_typed_data", typedData: typedData as unknown as TypedDataDefinition }, noFramework);
    assert.deepEqual(facts.counterparties, [FRIEND]);
    assert.deepEqual(facts.tokens, [{ chainId: 31337, token: TOKEN, amount: 40n }]);
    assert.equal(violationOf({ recipients: [FRIEND] }, facts, [], 0, NOW), null);
    assert.equal(violationOf({ recipients: [SPENDER] }, facts, [], 0, NOW)?.rule, "recipients");
  });

  it("a batch permit of several capped tokens is refused; one capped token in a batch is counted", () => {
    const policy = {
      tokens: [
        { chain_id: 31337, token: TOKEN, per_day: "150" },
        { chain_id: 31337, token: OTHER_TOKEN, per_day: "150" },
      ],
    };
    const both = permit("PermitBatchTransferFrom", [
      [TOKEN, 1n],
      [OTHER_TOKEN, 1n],
    ]);
    assert.equal(violationOf(policy, both, [], 0, NOW)?.rule, "tokens");
    const oneCapped = permit("PermitBatchTransferFrom", [
      [TOKEN, 200n],
      [FRIEND, 1n],
    ]);
    assert.equal(violationOf(policy, oneCapped, [], 0, NOW)?.rule, "tokens.per_day");
  });

  const order = (domain: Record<string, unknown>) =>
    factsOf(
      {
        kind: "sign_typed_data",
        typedData: { domain, types: { Order: [field("id:uint256")] }, primaryType: "Order", message: { id: 1n } },
      },
      noFramework,
    );

  it("default deny: what cannot be read is refused under a token, recipient or unlimited-approval rule, naming it", () => {
    const unknownCall = transaction({ to: FRIEND, data: "0xd0e30db0" });
    assert.equal(unknownCall.readable, false);
    assert.equal(violationOf({ recipients: [FRIEND] }, unknownCall, [], 0, NOW)?.rule, "recipients");
    assert.equal(violationOf({ no_unlimited_approvals: true }, unknownCall, [], 0, NOW)?.rule, "no_unlimited_approvals");
    assert.equal(violationOf({ no_unlimited_approvals: false }, unknownCall, [], 0, NOW), null);
    const tokens = [{ chain_id: 31337, token: OTHER_TOKEN, per_day: "1" }];
    assert.equal(violationOf({ tokens }, unknownCall, [], 0, NOW)?.rule, "tokens");
    assert.equal(violationOf({ native: { per_day: "1" } }, unknownCall, [], 0, NOW), null, "a native cap reads the value");
    // Named by the person: then it may be asked for.
    assert.equal(violationOf({ recipients: [SPENDER], contracts: [{ address: FRIEND }] }, unknownCall, [], 0, NOW), null);
    const unread = order({ name: "Shop", chainId: 31337, verifyingContract: FRIEND });
    assert.equal(violationOf({ recipients: [FRIEND] }, unread, [], 0, NOW)?.rule, "recipients");
    assert.equal(violationOf({ recipients: [FRIEND], typed_data: { verifying_contracts: [FRIEND] } }, unread, [], 0, NOW), null);
    assert.equal(violationOf({ recipients: [FRIEND], contracts: [{ address: FRIEND }] }, unread, [], 0, NOW)?.rule, "recipients");
  });

  it("a capped token's unknown function, and a batch not read whole under a token cap, are refused even when named", () => {
    const tokens = [{ chain_id: 31337, token: TOKEN, per_transaction: "100" }];
    const burn = transaction({ to: TOKEN, data: "0x42966c680000000000000000000000000000000000000000000000000000000000000001" });
    assert.equal(violationOf({ tokens, contracts: [{ address: TOKEN }] }, burn, [], 0, NOW)?.rule, "tokens");
    const aggregate = transaction({
      to: FRIEND,
      data: encodeFunctionData({
        abi: parseAbi(["function aggregate((address target, bytes callData)[] calls)"]),
        args: [[{ target: TOKEN, callData: "0x" }]],
      }),
    });
    assert.equal(aggregate.batch, true);
    assert.equal(violationOf({ tokens, contracts: [{ address: FRIEND }] }, aggregate, [], 0, NOW)?.rule, "tokens");
    assert.equal(violationOf({ contracts: [{ address: FRIEND }] }, aggregate, [], 0, NOW), null);
  });

  it("a multicall read whole counts every call: its amounts added up on the token, each recipient checked", () => {
    const transfer = (to: `0x${string}`, amount: bigint) =>
      encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [to, amount] });
    const multicall = (calls: `0x${string}`[]) =>
      transaction({ to: TOKEN, data: encodeFunctionData({ abi: parseAbi(["function multicall(bytes[] data)"]), args: [calls] }) });
    const facts = multicall([transfer(FRIEND, 60n), transfer(SPENDER, 50n)]);
    assert.deepEqual(facts.tokens, [{ chainId: 31337, token: TOKEN, amount: 110n }]);
    assert.deepEqual(facts.counterparties, [FRIEND, SPENDER]);
    const tokens = [{ chain_id: 31337, token: TOKEN, per_transaction: "100" }];
    assert.equal(violationOf({ tokens }, facts, [], 0, NOW)?.rule, "tokens.per_transaction");
    assert.equal(violationOf({ recipients: [FRIEND] }, facts, [], 0, NOW)?.rule, "recipients");
    assert.equal(violationOf({ tokens }, multicall([transfer(FRIEND, 60n), transfer(FRIEND, 40n)]), [], 0, NOW), null);
  });

  it("Permit2's approve counts on the token it names; an approval from 2^128 is unlimited", () => {
    const approve = (amount: bigint) =>
      transaction({
        to: PERMIT2,
        data: encodeFunctionData({
          abi: parseAbi(["function approve(address token, address spender, uint160 amount, uint48 expiration)"]),
          args: [TOKEN, SPENDER, amount, 0],
        }),
      });
    assert.deepEqual(approve(5n).tokens, [{ chainId: 31337, token: TOKEN, amount: 5n }]);
    assert.equal(violationOf({ no_unlimited_approvals: true }, approve(2n ** 128n), [], 0, NOW)?.rule, "no_unlimited_approvals");
    assert.equal(violationOf({ no_unlimited_approvals: true }, approve(2n ** 128n - 1n), [], 0, NOW), null);
  });

  it("typed data is held to the grant's chains by its domain chainId; without one it could be used anywhere", () => {
    assert.equal(violationOf({ chains: [1] }, order({ name: "Shop", chainId: 8453 }), [], 0, NOW)?.rule, "chains");
    assert.equal(violationOf({ chains: [1] }, order({ name: "Shop", chainId: 1 }), [], 0, NOW), null);
    assert.equal(violationOf({ chains: [1] }, order({ name: "Shop" }), [], 0, NOW)?.rule, "chains");
  });

  it("native caps count each chain on its own", () => {
    const policy = { native: { per_day: String(parseEther("1")) } };
    const earlier = [held(hoursAgo(1), { nativeValue: String(parseEther("0.6")), chainId: 8453 })];
    assert.equal(violationOf(policy, transaction({ value: String(parseEther("0.6")) }), earlier, 0, NOW), null);
    const onBase = transaction({ chainId: 8453, value: String(parseEther("0.6")) });
    assert.equal(violationOf(policy, onBase, earlier, 0, NOW)?.rule, "native.per_day");
  });
});

describe("spending policy rules: what the DeleGator would run, delegations and user operations", () => {
  const WALLET = "0x8c95Ae3d6b31f8FBa1D3C8e8B3A2Bc0C1C9956D8";
  const taker = TAKER;
  const withFramework = () => testFramework;
  const cap = { native: { per_transaction: String(parseEther("0.05")), per_day: String(parseEther("0.2")) } };
  /** A transaction to the wallet itself running `data` through its DeleGator. */
  const toSelf = (data: `0x${string}`, value = "0") =>
    factsOf({ kind: "send_transaction", transaction: { chainId: 31337, to: WALLET, value, data } }, withFramework);
  const sendOf = (ether: string) => ({ target: taker, value: parseEther(ether), callData: "0x" as const });
  const signed = (typedData: TypedDataDefinition) => factsOf({ kind: "sign_typed_data", typedData }, withFramework);

  it("execute(single, (taker, 1 ETH, 0x)) sent to the wallet itself counts its 1 ETH: over a 0.05 ETH cap", () => {
    const facts = toSelf(execute([sendOf("1")]));
    assert.equal(facts.native, parseEther("1"));
    assert.deepEqual(facts.counterparties, [taker]);
    const refused = violationOf(cap, facts, [], 0, NOW);
    assert.equal(refused?.rule, "native.per_transaction");
    assert.deepEqual(refused?.allowance, { limit: String(parseEther("0.05")), remaining: String(parseEther("0.05")) });
    const small = toSelf(execute([sendOf("0.01")]));
    assert.equal(violationOf(cap, small, [], 0, NOW), null);
    // Held like a transfer of 0.01 ETH: the rolling day counts it.
    const earlier = [held(hoursAgo(1), { nativeValue: String(parseEther("0.195")) })];
    assert.equal(violationOf(cap, small, earlier, 0, NOW)?.rule, "native.per_day");
  });

  it("a batch's values add up with the value sent along, and its token transfers count under token caps", () => {
    const transfer = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [FRIEND, 101n] });
    const facts = toSelf(
      execute([sendOf("0.02"), sendOf("0.02"), { target: TOKEN, value: 0n, callData: transfer }]),
      String(parseEther("0.02")),
    );
    assert.equal(facts.native, parseEther("0.06"));
    assert.equal(violationOf(cap, facts, [], 0, NOW)?.rule, "native.per_transaction");
    assert.deepEqual(facts.tokens, [{ chainId: 31337, token: TOKEN, amount: 101n }]);
    const tokens = [{ chain_id: 31337, token: TOKEN, per_transaction: "100" }];
    assert.equal(violationOf({ tokens }, facts, [], 0, NOW)?.rule, "tokens.per_transaction");
    assert.equal(violationOf({ recipients: [taker] }, facts, [], 0, NOW)?.rule, "recipients");
    // Each contract it calls is held to the contract list, not only the wallet's own.
    assert.equal(violationOf({ contracts: [{ address: WALLET }] }, facts, [], 0, NOW)?.rule, "contracts");
  });

  it("a shape that cannot be counted is refused under any cap, naming why; without one the person decides", () => {
    const tried = toSelf(execute([sendOf("1")], mode("00", "01")));
    const refused = violationOf(cap, tried, [], 0, NOW);
    assert.equal(refused?.rule, "native.per_transaction");
    assert.match(refused?.reason ?? "", /try mode/);
    assert.equal(violationOf({ tokens: [{ chain_id: 31337, token: TOKEN, per_day: "1" }] }, tried, [], 0, NOW)?.rule, "tokens");
    assert.equal(violationOf({}, tried, [], 0, NOW), null);
    const toManager = toSelf(execute([{ target: testFramework.DelegationManager, value: 0n, callData: "0x" }]));
    assert.match(violationOf(cap, toManager, [], 0, NOW)?.reason ?? "", /Delegation Framework's own contract/);
    // An unknown call it runs is a call that cannot be read: the default deny names its contract.
    const unknown = toSelf(execute([{ target: SPENDER, value: 0n, callData: "0xd0e30db0" }]));
    assert.match(violationOf({ recipients: [FRIEND] }, unknown, [], 0, NOW)?.reason ?? "", new RegExp(`0xd0e30db0 to ${SPENDER}`));
  });

  it("a delegation counts the most it could ever move; one its caveats do not bound is refused under a cap", () => {
    const [coin] = preparedAllowance(WALLET).delegations;
    const bounded = signed(delegationTypedData(testFramework, { delegate: SPENDER, delegator: WALLET, caveats: coin.caveats }));
    assert.equal(bounded.native, parseEther("0.03"));
    assert.equal(violationOf(cap, bounded, [], 0, NOW), null);
    assert.equal(
      violationOf({ native: { per_transaction: String(parseEther("0.02")) } }, bounded, [], 0, NOW)?.rule,
      "native.per_transaction",
    );
    const open = signed(delegationTypedData(testFramework, { delegate: SPENDER, delegator: WALLET, caveats: [] }));
    const refused = violationOf(cap, open, [], 0, NOW);
    assert.equal(refused?.rule, "native.per_transaction");
    assert.match(refused?.reason ?? "", /no caveats/);
    assert.equal(violationOf({ tokens: [{ chain_id: 31337, token: TOKEN, per_day: "1" }] }, open, [], 0, NOW)?.rule, "tokens");
    assert.equal(violationOf({ no_unlimited_approvals: true }, open, [], 0, NOW)?.rule, "no_unlimited_approvals");
    assert.equal(violationOf({ recipients: [FRIEND] }, open, [], 0, NOW)?.rule, "recipients");
    assert.equal(violationOf({}, open, [], 0, NOW), null);
  });

  it("a user operation counts its calls and its gas; one with a paymaster is refused under a cap", () => {
    const operation = signed(userOperationTypedData(testFramework, WALLET, execute([sendOf("0.01")])));
    assert.equal(operation.native, parseEther("0.01") + 290_000n * 1_000_000_000n);
    assert.equal(violationOf(cap, operation, [], 0, NOW), null);
    const large = signed(userOperationTypedData(testFramework, WALLET, execute([sendOf("1")])));
    assert.equal(violationOf(cap, large, [], 0, NOW)?.rule, "native.per_transaction");
    const paid = signed(userOperationTypedData(testFramework, WALLET, execute([sendOf("0.01")]), `${SPENDER}00`));
    assert.match(violationOf(cap, paid, [], 0, NOW)?.reason ?? "", /paymaster/);
  });
});
