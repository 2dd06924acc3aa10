// Limits that fail closed (docs/policies.md), through the MCP SDK client: on the local chain with a deployed ERC-20
// and the canonical Permit2 address, behind a proxy that records every JSON-RPC call that reaches the node.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { encodeFunctionData, erc20Abi, maxUint256, parseAbi, parseEther, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { startApp, type RunningApp } from "../support/app";
import { startChain, type LocalChain } from "../support/chain";
import { deployErc20 } from "../support/contracts";
import { orderTypedData } from "../support/fixtures";
import { connectWithBearer } from "../support/mcp-client";
import { obtainTokens } from "../support/oauth";
import { countingProxy, type CountingProxy } from "../support/rpc-counter";
import { db } from "@/lib/db";
import { randomId } from "@/lib/crypto";
import { describeRequest } from "@/lib/wallet/request-description";
import { payloadOf } from "@/lib/wallet/request-payload";
import type { Policy, PolicyView } from "@/contract";

type Reply = { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { type: string; text?: string }[] };

const FRIEND = "0x000000000000000000000000000000000000bEEF";
const STRANGER = "0x000000000000000000000000000000000000dEaD";
const PERMIT2 = "0x000000000022D473030F116dDEE9F6B43aC78BA3";
const SECOND_CHAIN = 100;
const LATER = "2000000000";

const tokenAbi = parseAbi([
  "function increaseAllowance(address spender, uint256 addedValue) returns (bool)",
  "function transferAndCall(address to, uint256 value, bytes data) returns (bool)",
  "function multicall(bytes[] data) returns (bytes[])",
  "function burn(uint256 amount)",
]);
const permit2Abi = parseAbi(["function approve(address token, address spender, uint160 amount, uint48 expiration)"]);
const fields = (...entries: string[]) => entries.map((entry) => ({ name: entry.split(":")[0], type: entry.split(":")[1] }));

describe("limits that fail closed", { timeout: 240_000 }, () => {
  let chain: LocalChain;
  let second: LocalChain;
  let proxy: CountingProxy;
  let app: RunningApp;
  let agent: Client;
  let grantId = "";
  let credentialId = "";
  let owner: Address;
  let token: Address;

  before(async () => {
    chain = await startChain();
    second = await startChain({ chainId: SECOND_CHAIN });
    proxy = await countingProxy(chain.rpcUrl);
    const chains = [
      { id: chain.chainId, name: "Local dev chain", rpcUrl: proxy.rpcUrl, symbol: "ETH" },
      { id: SECOND_CHAIN, name: "Second local chain", rpcUrl: second.rpcUrl, symbol: "xDAI" },
    ];
    app = await startApp({ env: { CHAINS: JSON.stringify(chains) } });
    owner = privateKeyToAccount(generatePrivateKey()).address;
    await chain.fund(owner, "100");
    await second.fund(owner, "100");
    token = await deployErc20(chain, { name: "Test Token", symbol: "TT", supply: 10n ** 24n, holder: owner });
    const flow = await obtainTokens(app, {
      credentials: async (userId) => {
        credentialId = (await db().credential.create({ data: { id: randomId("cr_"), userId, name: "Main", kind: "evm", address: owner } }))
          .id;
        return [{ credentialId, mode: "approve" }];
      },
    });
    grantId = flow.grantId;
    agent = await connectWithBearer(app.baseUrl, flow.tokens.access_token);
  });
  after(async () => {
    await agent?.close();
    await app?.stop();
    await proxy?.stop();
    await chain?.stop();
    await second?.stop();
  });

  /** The person's rules (set directly: the screens that edit them call the same storage). Earlier requests are cancelled. */
  async function withPolicy(policy: Policy) {
    await db().agentRequest.updateMany({ where: { grantId, status: "pending" }, data: { status: "cancelled" } });
    await db().grantCredential.update({
      where: { grantId_credentialId: { grantId, credentialId } },
      data: { policy: JSON.stringify(policy) },
    });
  }
  const call = async (name: string, args: Record<string, unknown>) =>
    (await agent.callTool({ name, arguments: { credential_id: credentialId, ...args } })) as Reply;
  const send = (to: string, data: Hex, value = 0n, chainId = chain.chainId) =>
    call("send_transaction", { chain_id: chainId, to, value: String(value), data });
  const signTyped = (typedData: object) => call("sign_typed_data", { typed_data: typedData });
  const erc20 = (functionName: "transfer" | "approve", to: string, amount: bigint) =>
    encodeFunctionData({ abi: erc20Abi, functionName, args: [to as Address, amount] });

  function refusedBy(reply: Reply, rule: string) {
    assert.equal(reply.isError, true, JSON.stringify(reply));
    assert.equal(reply.structuredContent?.rule, rule, reply.content?.[0]?.text);
    assert.ok(reply.content?.[0]?.text?.startsWith("Refused by the spending policy: "), reply.content?.[0]?.text);
  }
  function allowed(reply: Reply): string {
    assert.notEqual(reply.isError, true, reply.content?.[0]?.text);
    assert.equal(reply.structuredContent?.status, "pending");
    return reply.structuredContent!.request_id as string;
  }

  /** EIP-3009 (USDC, EURC): a signed transfer of the domain's token to `to`. */
  const authorization = (
    kind: "TransferWithAuthorization" | "ReceiveWithAuthorization",
    to: string,
    value: bigint,
    chainId = chain.chainId,
  ) => ({
    domain: { name: "Test Token", version: "2", chainId, verifyingContract: token },
    types: { [kind]: fields("from:address", "to:address", "value:uint256", "validAfter:uint256", "validBefore:uint256", "nonce:bytes32") },
    primaryType: kind,
    message: { from: owner, to, value: String(value), validAfter: "0", validBefore: LATER, nonce: `0x${"01".repeat(32)}` },
  });
  const daiPermit = (spender: string, allowedAll: boolean) => ({
    domain: { name: "Test Token", version: "1", chainId: chain.chainId, verifyingContract: token },
    types: { Permit: fields("holder:address", "spender:address", "nonce:uint256", "expiry:uint256", "allowed:bool") },
    primaryType: "Permit",
    message: { holder: owner, spender, nonce: "0", expiry: LATER, allowed: allowedAll },
  });
  const permitWitness = (spender: string, amount: bigint) => ({
    domain: { name: "Permit2", chainId: chain.chainId, verifyingContract: PERMIT2 },
    types: {
      PermitWitnessTransferFrom: fields(
        "permitted:TokenPermissions",
        "spender:address",
        "nonce:uint256",
        "deadline:uint256",
        "witness:Order",
      ),
      TokenPermissions: fields("token:address", "amount:uint256"),
      Order: fields("recipient:address", "minimum:uint256"),
    },
    primaryType: "PermitWitnessTransferFrom",
    message: {
      permitted: { token, amount: String(amount) },
      spender,
      nonce: "1",
      deadline: LATER,
      witness: { recipient: FRIEND, minimum: "1" },
    },
  });
  const permitSingle = (spender: string, amount: bigint) => ({
    domain: { name: "Permit2", chainId: chain.chainId, verifyingContract: PERMIT2 },
    types: {
      PermitSingle: fields("details:PermitDetails", "spender:address", "sigDeadline:uint256"),
      PermitDetails: fields("token:address", "amount:uint160", "expiration:uint48", "nonce:uint48"),
    },
    primaryType: "PermitSingle",
    message: { details: { token, amount: String(amount), expiration: LATER, nonce: "0" }, spender, sigDeadline: LATER },
  });
  const permit2Approve = (spender: string, amount: bigint) =>
    encodeFunctionData({ abi: permit2Abi, functionName: "approve", args: [token, spender as Address, amount, 2_000_000_000] });
  const cap = (limits: { per_transaction?: string; per_day?: string }) => [{ chain_id: chain.chainId, token, ...limits }];

  it("1. a refused transaction is never prepared at the node, and is refused by the policy rather than failing on the chain", async () => {
    await withPolicy({ tokens: cap({ per_transaction: "100" }) });
    const reached = proxy.methods.length;
    refusedBy(await send(token, erc20("transfer", FRIEND, 101n)), "tokens.per_transaction");
    // More than the wallet holds: the node could not even estimate its gas, yet the answer is the rule.
    refusedBy(await send(token, erc20("transfer", FRIEND, 10n ** 30n)), "tokens.per_transaction");
    // The refusal's words read the token's symbol and decimals (eth_call); nothing is estimated, priced or sent.
    assert.deepEqual(
      proxy.methods.slice(reached).filter((method) => method !== "eth_call"),
      [],
      "no transaction was prepared at the node",
    );
    allowed(await send(token, erc20("transfer", FRIEND, 100n)));
    assert.ok(proxy.methods.slice(reached).includes("eth_estimateGas"), "an allowed transaction is prepared through the proxy");
  });

  it("1. what the decoder cannot read is refused under a token, recipient or unlimited-approval rule unless named", async () => {
    const unknownCall = "0x12345678";
    await withPolicy({ recipients: [FRIEND] });
    refusedBy(await send(FRIEND, unknownCall), "recipients");
    refusedBy(await signTyped(orderTypedData("Shop", "memo")), "recipients");
    await withPolicy({ no_unlimited_approvals: true });
    refusedBy(await send(FRIEND, unknownCall), "no_unlimited_approvals");
    await withPolicy({ tokens: cap({ per_transaction: "100" }) });
    refusedBy(await send(STRANGER, unknownCall), "tokens");

    // The person names the contract (or the typed data's verifyingContract): then it may be called.
    await withPolicy({ recipients: [FRIEND], contracts: [{ address: FRIEND }] });
    allowed(await send(FRIEND, unknownCall));
    const order = orderTypedData("Shop", "memo");
    await withPolicy({ recipients: [FRIEND], typed_data: { verifying_contracts: [order.domain.verifyingContract] } });
    allowed(await signTyped(order));

    // A capped token's unknown function, or a multicall not decoded whole, is refused even when the contract is named.
    await withPolicy({ tokens: cap({ per_transaction: "100" }), contracts: [{ address: token }] });
    refusedBy(await send(token, encodeFunctionData({ abi: tokenAbi, functionName: "burn", args: [1n] })), "tokens");
    const multicall = (calls: Hex[]) => encodeFunctionData({ abi: tokenAbi, functionName: "multicall", args: [calls] });
    refusedBy(await send(token, multicall([erc20("transfer", FRIEND, 1n), unknownCall])), "tokens");
    refusedBy(await send(token, multicall([erc20("transfer", FRIEND, 60n), erc20("transfer", FRIEND, 60n)])), "tokens.per_transaction");
  });

  it("1. EIP-3009, DAI, Permit2 witness and approve, increaseAllowance, transferAndCall count under the rules", async () => {
    await withPolicy({ tokens: cap({ per_transaction: "100" }), recipients: [FRIEND] });
    const increase = (spender: string, amount: bigint) =>
      encodeFunctionData({ abi: tokenAbi, functionName: "increaseAllowance", args: [spender as Address, amount] });
    refusedBy(await send(token, increase(FRIEND, 101n)), "tokens.per_transaction");
    refusedBy(await send(token, increase(STRANGER, 1n)), "recipients");
    const transferAndCall = encodeFunctionData({ abi: tokenAbi, functionName: "transferAndCall", args: [FRIEND, 101n, "0x"] });
    refusedBy(await send(token, transferAndCall), "tokens.per_transaction");
    refusedBy(await send(PERMIT2, permit2Approve(FRIEND, 101n)), "tokens.per_transaction");
    refusedBy(await send(PERMIT2, permit2Approve(STRANGER, 1n)), "recipients");

    refusedBy(await signTyped(authorization("TransferWithAuthorization", FRIEND, 101n)), "tokens.per_transaction");
    refusedBy(await signTyped(authorization("ReceiveWithAuthorization", STRANGER, 1n)), "recipients");
    refusedBy(await signTyped(daiPermit(FRIEND, true)), "tokens.per_transaction");
    refusedBy(await signTyped(daiPermit(STRANGER, false)), "recipients");
    refusedBy(await signTyped(permitWitness(FRIEND, 101n)), "tokens.per_transaction");
    refusedBy(await signTyped(permitWitness(STRANGER, 1n)), "recipients");

    allowed(await send(token, increase(FRIEND, 100n)));
    allowed(await signTyped(authorization("TransferWithAuthorization", FRIEND, 100n)));
    allowed(await signTyped(permitWitness(FRIEND, 100n)));
  });

  it("2. typed data whose domain chainId is outside the grant's chains is refused", async () => {
    await withPolicy({ chains: [chain.chainId] });
    refusedBy(await signTyped(authorization("TransferWithAuthorization", FRIEND, 1n, 1)), "chains");
    const { chainId: _chainId, ...anyChain } = orderTypedData("Shop", "memo").domain;
    const unbound = { ...orderTypedData("Shop", "memo"), domain: anyChain };
    unbound.types.EIP712Domain = unbound.types.EIP712Domain.filter((field) => field.name !== "chainId");
    refusedBy(await signTyped(unbound), "chains");
    allowed(await signTyped(authorization("TransferWithAuthorization", FRIEND, 1n)));
  });

  it("3. an approval at or above 2^128 is unlimited, must fit a token cap, and the approval page says unlimited", async () => {
    await withPolicy({ no_unlimited_approvals: true });
    refusedBy(await send(token, erc20("approve", FRIEND, 2n ** 128n)), "no_unlimited_approvals");
    refusedBy(await send(PERMIT2, permit2Approve(FRIEND, 2n ** 128n)), "no_unlimited_approvals");
    refusedBy(await signTyped(permitSingle(FRIEND, 2n ** 128n)), "no_unlimited_approvals");
    allowed(await send(token, erc20("approve", FRIEND, 2n ** 128n - 1n)));

    await withPolicy({ tokens: cap({ per_day: "1000" }) });
    refusedBy(await send(token, erc20("approve", FRIEND, maxUint256)), "tokens.per_day");
    await withPolicy({ tokens: cap({ per_transaction: "1000" }) });
    refusedBy(await signTyped(permitSingle(FRIEND, 2n ** 128n)), "tokens.per_transaction");

    await withPolicy({});
    const approval = allowed(await send(token, erc20("approve", FRIEND, 2n ** 128n)));
    const permit = allowed(await signTyped(permitSingle(FRIEND, 2n ** 130n)));
    const described = async (id: string) => describeRequest(payloadOf(await db().agentRequest.findUniqueOrThrow({ where: { id } })));
    const page = await described(approval);
    assert.equal(page.kind === "send_transaction" && page.call.kind === "decoded" && page.call.action, "Allow spending of unlimited TT");
    const signed = await described(permit);
    assert.equal(signed.kind === "sign_typed_data" && signed.permit?.action, "Allow spending of unlimited TT");
  });

  it("4. native caps are per chain, and get_policy gives each chain's allowance in its coin", async () => {
    await withPolicy({ native: { per_day: String(parseEther("1")) } });
    allowed(await send(FRIEND, "0x", parseEther("0.6")));
    allowed(await send(FRIEND, "0x", parseEther("0.6"), SECOND_CHAIN));
    refusedBy(await send(FRIEND, "0x", parseEther("0.6")), "native.per_day");
    refusedBy(await send(FRIEND, "0x", parseEther("0.6"), SECOND_CHAIN), "native.per_day");
    const view = (await call("get_policy", {})).structuredContent as PolicyView;
    const left = String(parseEther("0.4"));
    assert.equal(view.remaining.native_per_day?.remaining, left);
    const byChain = Object.fromEntries(view.remaining.native_by_chain.map((entry) => [entry.chain_id, entry]));
    assert.equal(byChain[chain.chainId].symbol, "ETH");
    assert.equal(byChain[chain.chainId].per_day?.remaining, left);
    assert.equal(byChain[SECOND_CHAIN].symbol, "xDAI");
    assert.equal(byChain[SECOND_CHAIN].per_day?.remaining, left);
  });

  it("5. EIP-712 values are type-checked: a number in a string field, true in a uint256, are refused", async () => {
    await withPolicy({});
    const before = await db().agentRequest.count({ where: { grantId } });
    const order = orderTypedData("Shop", "memo");
    const cases: [object, RegExp][] = [
      [{ ...order, message: { ...order.message, memo: 42 } }, /message\.memo must be a string/],
      [{ ...order, message: { ...order.message, amount: true } }, /message\.amount must be an integer/],
      [{ ...order, domain: { ...order.domain, chainId: "31337.5" } }, /domain\.chainId must be an integer/],
      [{ ...order, message: { ...order.message, amount: "-1" } }, /message\.amount .*uint256/],
    ];
    for (const [typedData, reason] of cases) {
      const reply = await signTyped(typedData);
      assert.equal(reply.isError, true, JSON.stringify(reply));
      assert.match(reply.content?.[0]?.text ?? "", reason);
    }
    assert.equal(await db().agentRequest.count({ where: { grantId } }), before, "no request was created");
  });
});
