import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseTransaction, serializeTransaction } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { messageExcerpt, transactionForSigning, transactionMismatch, type PreparedTransaction } from "./request-payload";

const account = privateKeyToAccount(`0x${"11".repeat(32)}`);
const erc20Transfer: PreparedTransaction = {
  type: "eip1559",
  chainId: 31337,
  to: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
  value: "0",
  data: `0xa9059cbb${"70997970c51812dc3a010c7d01b50e0d17dc79c8".padStart(64, "0")}${"a".padStart(64, "0")}`,
  nonce: 0,
  gas: "52000",
  maxFeePerGas: "2000000000",
  maxPriorityFeePerGas: "0",
};

async function signedAndParsed(prepared: PreparedTransaction) {
  return parseTransaction(await account.signTransaction(transactionForSigning(prepared)));
}

describe("transactionMismatch", () => {
  it("accepts exactly the prepared transaction when value, nonce and tip are 0 (RLP leaves zeros out)", async () => {
    const signed = await signedAndParsed(erc20Transfer);
    assert.equal(signed.value, undefined, "viem omits a zero value: the comparison must not depend on it");
    assert.equal(transactionMismatch(signed, erc20Transfer), null);
  });

  it("accepts a plain transfer with no data", async () => {
    const plain = { ...erc20Transfer, value: "10000000000000000", data: "0x" as const, nonce: 7 };
    assert.equal(transactionMismatch(await signedAndParsed(plain), plain), null);
  });

  it("names the first field that differs", async () => {
    const signed = await signedAndParsed(erc20Transfer);
    assert.equal(transactionMismatch(signed, { ...erc20Transfer, value: "1" }), "value");
    assert.equal(transactionMismatch(signed, { ...erc20Transfer, nonce: 1 }), "nonce");
    assert.equal(transactionMismatch(signed, { ...erc20Transfer, chainId: 1 }), "chainId");
    assert.equal(transactionMismatch(signed, { ...erc20Transfer, to: "0x0000000000000000000000000000000000000001" }), "to");
    assert.equal(transactionMismatch(signed, { ...erc20Transfer, data: "0x" }), "data");
    assert.equal(transactionMismatch(signed, { ...erc20Transfer, maxFeePerGas: "2000000001" }), "maxFeePerGas");
  });

  it("refuses a signed transaction that adds an access list or is of another type", async () => {
    const withAccessList = parseTransaction(
      serializeTransaction({
        ...transactionForSigning(erc20Transfer),
        accessList: [{ address: erc20Transfer.to, storageKeys: [] }],
      }),
    );
    assert.equal(transactionMismatch(withAccessList, erc20Transfer), "accessList");
    const legacy = parseTransaction(serializeTransaction({ to: erc20Transfer.to, nonce: 0, gas: 52000n, gasPrice: 1n, chainId: 31337 }));
    assert.equal(transactionMismatch(legacy, erc20Transfer), "type");
  });
});

describe("messageExcerpt (the approvals list and its notifications)", () => {
  it("shows a message's hidden characters escaped, as the page does (a list and a notification have no warning)", () => {
    assert.equal(messageExcerpt("Pay \u202Egpj.exe\u200B"), "Pay ⟨U+202E⟩gpj.exe⟨U+200B⟩");
  });

  it("cuts a long message after 80 characters", () => {
    assert.equal(messageExcerpt("a".repeat(81)), `${"a".repeat(80)}…`);
  });
});
