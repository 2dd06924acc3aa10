import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { encodeFunctionData, erc20Abi, erc721Abi, maxUint256 } from "viem";
import { PERMIT2, x402Permit2TypedData } from "./permits";
import { assessRisk, dealingsOf, riskChip } from "./risk";
import type { RequestPayload } from "./request-payload";
import type { RequestDescription } from "./request-description";
import { testFramework } from "@/lib/allowances/framework.fixture";
import { delegationTypedData, execute, preparedTransaction } from "@/lib/allowances/deleGator.fixture";

const TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const SPENDER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const FRIEND = "0x000000000000000000000000000000000000bEEF";

const send = preparedTransaction;
const approveAll = send(TOKEN, encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [SPENDER, maxUint256] }));

/** A transaction's description as the page has it: only what the risks read of it matters here. */
const described = (payload: RequestPayload, unlimited: boolean): RequestDescription =>
  ({
    kind: "send_transaction",
    transaction: (payload as Extract<RequestPayload, { kind: "send_transaction" }>).transaction,
    call: { kind: "decoded", data: "0x", action: "", details: [], warning: null, unlimited },
  }) as unknown as RequestDescription;

const nobody = { names: {}, used: new Set<string>() };
const texts = (risk: { risks: { text: string }[] }) => risk.risks.map((entry) => entry.text);

describe("the risks of a request", () => {
  it("whom a request deals with, from its payload alone", () => {
    assert.deepEqual(dealingsOf(send(FRIEND)), { chainId: 31337, contracts: [], parties: [{ role: "recipient", address: FRIEND }] });
    // an x402 Permit2 payment deals with its payee: x402's proxy, the spender, pays no one else
    const payment = x402Permit2TypedData({ chainId: 31337, token: TOKEN, amount: 10n, payee: FRIEND, nonce: 1n, deadline: 9n });
    assert.deepEqual(dealingsOf({ kind: "sign_typed_data", typedData: payment as never }), {
      chainId: 31337,
      contracts: [PERMIT2],
      parties: [{ role: "recipient", address: FRIEND }],
    });
    assert.deepEqual(dealingsOf(approveAll), { chainId: 31337, contracts: [TOKEN], parties: [{ role: "spender", address: SPENDER }] });
    const operator = encodeFunctionData({ abi: erc721Abi, functionName: "setApprovalForAll", args: [SPENDER, true] });
    assert.deepEqual(dealingsOf(send(TOKEN, operator)).parties, [{ role: "operator", address: SPENDER }]);
    assert.deepEqual(dealingsOf(send(FRIEND, "0xdeadbeef")), { chainId: 31337, contracts: [FRIEND], parties: [] });
    assert.deepEqual(dealingsOf({ kind: "sign_message", message: "hi" }), { chainId: null, contracts: [], parties: [] });
  });

  it("an unlimited approval to a spender the person does not know: every sign, and an acknowledgement", () => {
    const risk = assessRisk(described(approveAll, true), dealingsOf(approveAll), nobody, new Set([SPENDER.toLowerCase()]));
    assert.deepEqual(texts(risk), [
      "Unlimited approval",
      "Spender is a contract, not a person",
      "Unknown contract: not in your address book, never used",
      "Spender never used before",
    ]);
    assert.match(risk.acknowledge ?? "", /^I understand/);
    assert.deepEqual(riskChip(risk), {
      kind: "unlimited",
      text: "Unlimited approval",
      more: "+3: Spender is a contract, not a person · Unknown contract · Spender never used before",
    });
  });

  it("a spender in the address book needs no acknowledgement; one used before is not new; a known token is not unknown", () => {
    const named = { names: { [SPENDER.toLowerCase()]: "Exchange" }, used: new Set<string>() };
    assert.equal(assessRisk(described(approveAll, true), dealingsOf(approveAll), named, new Set()).acknowledge, null);
    const used = { names: {}, used: new Set([SPENDER.toLowerCase(), TOKEN.toLowerCase()]) };
    const risk = assessRisk(described(approveAll, true), dealingsOf(approveAll), used, new Set());
    assert.deepEqual(texts(risk), ["Unlimited approval"]);
    assert.equal(risk.acknowledge, null);
  });

  it("a limited approval asks no acknowledgement; a plain send to a new address says so; a known one has no risk", () => {
    const limited = send(TOKEN, encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [SPENDER, 5n] }));
    assert.equal(assessRisk(described(limited, false), dealingsOf(limited), nobody, new Set()).acknowledge, null);
    const plain = send(FRIEND);
    assert.deepEqual(texts(assessRisk(described(plain, false), dealingsOf(plain), nobody, new Set())), ["Recipient never used before"]);
    const known = { names: {}, used: new Set([FRIEND.toLowerCase()]) };
    const none = assessRisk(described(plain, false), dealingsOf(plain), known, new Set());
    assert.deepEqual(none, { risks: [], acknowledge: null });
    assert.equal(riskChip(none), null);
  });
});

describe("a token the wallet holds, and a sign-in for another site", () => {
  const transfer = send(TOKEN, encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [FRIEND, 5n] }));

  it("sending a token the wallet holds is not dealing with an unknown contract; one it does not hold is", () => {
    assert.equal(dealingsOf(transfer).sent, TOKEN);
    assert.equal(dealingsOf(approveAll).sent, undefined, "an approval hands the token to someone else: its contract stays checked");
    const held = assessRisk(described(transfer, false), dealingsOf(transfer), nobody, new Set(), { holdsSent: true });
    assert.deepEqual(texts(held), ["Recipient never used before"]);
    const unheld = assessRisk(described(transfer, false), dealingsOf(transfer), nobody, new Set());
    assert.deepEqual(texts(unheld), ["Unknown contract: not in your address book, never used", "Recipient never used before"]);
  });

  it("a sign-in for a site the asking client does not name is the first risk; one for its own site, or unchecked, is none", () => {
    const message = (domain: string) =>
      ({
        kind: "sign_message",
        message: "",
        signIn: { domain, address: FRIEND, uri: `https://${domain}/`, chainId: 1, statement: null, expirationTime: null },
        unavailable: [],
      }) as RequestDescription;
    const dealings = dealingsOf({ kind: "sign_message", message: "" });
    const foreign = assessRisk(message("drainer.example"), dealings, nobody, new Set(), { askerHosts: ["shop.example"] });
    assert.deepEqual(riskChip(foreign), {
      kind: "foreign_sign_in",
      text: "Sign-in for another site: drainer.example is not the asking app's",
      more: null,
    });
    assert.deepEqual(texts(assessRisk(message("shop.example:443"), dealings, nobody, new Set(), { askerHosts: ["shop.example"] })), []);
    assert.deepEqual(texts(assessRisk(message("drainer.example"), dealings, nobody, new Set(), { askerHosts: [] })), []);
  });
});

describe("the risks of what the DeleGator runs, and of a delegation", () => {
  it("execute on the wallet itself deals with whom its calls pay, not with the wallet as an unknown contract", () => {
    const run = send(FRIEND, execute([{ target: SPENDER, value: 1n, callData: "0x" }]));
    assert.deepEqual(dealingsOf(run), { chainId: 31337, contracts: [], parties: [{ role: "recipient", address: SPENDER }] });
    const approve = encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [SPENDER, maxUint256] });
    assert.deepEqual(dealingsOf(send(FRIEND, execute([{ target: TOKEN, value: 0n, callData: approve }]))).parties, [
      { role: "spender", address: SPENDER },
    ]);
  });

  it("a delegation its caveats do not bound, to a delegate the person does not know, needs their acknowledgement", () => {
    const delegation: RequestPayload = {
      kind: "sign_typed_data",
      typedData: delegationTypedData(testFramework, { delegate: SPENDER, delegator: FRIEND, caveats: [] }),
    };
    const dealings = dealingsOf(delegation);
    assert.deepEqual(dealings.parties, [{ role: "delegate", address: SPENDER }]);
    const description = {
      kind: "sign_typed_data",
      permit: null,
      operation: null,
      delegation: { unlimited: true },
    } as unknown as RequestDescription;
    const risk = assessRisk(description, dealings, nobody, new Set());
    assert.equal(risk.acknowledge, "I understand: a delegate I do not know could take all of it");
    assert.equal(riskChip(risk)?.more, "+2: Unknown contract · Delegate never used before");
  });
});
