import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { maxUint256, type TypedDataDefinition } from "viem";
import { permit2WitnessTypes } from "@x402/evm";
import { recognisePermit, x402Permit2TypedData, X402_EXACT_PERMIT2_PROXY } from "./permits";
import { eip2612Permit } from "./permit.fixture";

const token = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const other = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512";
const spender = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const owner = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const permit2Domain = { name: "Permit2", chainId: 31337, verifyingContract: "0x000000000022D473030F116dDEE9F6B43aC78BA3" };
const details = [
  { name: "token", type: "address" },
  { name: "amount", type: "uint160" },
  { name: "expiration", type: "uint48" },
  { name: "nonce", type: "uint48" },
];
const permissions = [
  { name: "token", type: "address" },
  { name: "amount", type: "uint256" },
];

const typed = (value: object) => value as unknown as TypedDataDefinition;

const eip2612 = typed(eip2612Permit({ token, owner, spender, value: maxUint256.toString() }));

describe("recognisePermit", () => {
  it("reads an EIP-2612 Permit: the token is the domain's contract, on the domain's chain", () => {
    assert.deepEqual(recognisePermit(eip2612), {
      kind: "Permit",
      chainId: 31337,
      spender,
      amounts: [{ token, amount: maxUint256 }],
      deadline: 1_900_000_000n,
    });
  });

  it("reads Permit2 PermitSingle and PermitBatch allowances (uint160 amounts, with their expiration)", () => {
    const single = recognisePermit(
      typed({
        domain: permit2Domain,
        types: {
          PermitSingle: [
            { name: "details", type: "PermitDetails" },
            { name: "spender", type: "address" },
            { name: "sigDeadline", type: "uint256" },
          ],
          PermitDetails: details,
        },
        primaryType: "PermitSingle",
        message: { details: { token, amount: "1000", expiration: "1800000000", nonce: "0" }, spender, sigDeadline: "1700000000" },
      }),
    );
    assert.deepEqual(single?.amounts, [{ token, amount: 1000n, expiration: 1_800_000_000n }]);
    assert.equal(single?.deadline, 1_700_000_000n);
    const batch = recognisePermit(
      typed({
        domain: permit2Domain,
        types: {
          PermitBatch: [
            { name: "details", type: "PermitDetails[]" },
            { name: "spender", type: "address" },
            { name: "sigDeadline", type: "uint256" },
          ],
          PermitDetails: details,
        },
        primaryType: "PermitBatch",
        message: {
          details: [
            { token, amount: "1", expiration: "0", nonce: "0" },
            { token: other, amount: (2n ** 160n - 1n).toString(), expiration: "0", nonce: "1" },
          ],
          spender,
          sigDeadline: "5",
        },
      }),
    );
    assert.deepEqual(
      batch?.amounts.map((entry) => [entry.token, entry.amount]),
      [
        [token, 1n],
        [other, 2n ** 160n - 1n],
      ],
    );
  });

  it("reads Permit2 PermitTransferFrom and PermitBatchTransferFrom", () => {
    const types = (primaryType: string, permitted: string) => ({
      [primaryType]: [
        { name: "permitted", type: permitted },
        { name: "spender", type: "address" },
        { name: "nonce", type: "uint256" },
        { name: "deadline", type: "uint256" },
      ],
      TokenPermissions: permissions,
    });
    const one = recognisePermit(
      typed({
        domain: permit2Domain,
        types: types("PermitTransferFrom", "TokenPermissions"),
        primaryType: "PermitTransferFrom",
        message: { permitted: { token, amount: "7" }, spender, nonce: "1", deadline: "9" },
      }),
    );
    assert.deepEqual(one, {
      kind: "PermitTransferFrom",
      chainId: 31337,
      spender,
      amounts: [{ token, amount: 7n }],
      deadline: 9n,
    });
    const many = recognisePermit(
      typed({
        domain: permit2Domain,
        types: types("PermitBatchTransferFrom", "TokenPermissions[]"),
        primaryType: "PermitBatchTransferFrom",
        message: { permitted: [{ token, amount: "7" }], spender, nonce: "1", deadline: "9" },
      }),
    );
    assert.equal(many?.kind, "PermitBatchTransferFrom");
    assert.deepEqual(many?.amounts, [{ token, amount: 7n }]);
  });

  it("reads a Permit2 witness transfer: the standard fields, then one field of the integrator's declared type", () => {
    const witness = {
      domain: permit2Domain,
      types: {
        PermitWitnessTransferFrom: [
          { name: "permitted", type: "TokenPermissions" },
          { name: "spender", type: "address" },
          { name: "nonce", type: "uint256" },
          { name: "deadline", type: "uint256" },
          { name: "witness", type: "Order" },
        ],
        TokenPermissions: permissions,
        Order: [{ name: "minimum", type: "uint256" }],
      },
      primaryType: "PermitWitnessTransferFrom",
      message: { permitted: { token, amount: "7" }, spender, nonce: "1", deadline: "9", witness: { minimum: "1" } },
    };
    assert.deepEqual(recognisePermit(typed(witness)), {
      kind: "PermitWitnessTransferFrom",
      chainId: 31337,
      spender,
      amounts: [{ token, amount: 7n }],
      deadline: 9n,
    });
    const undeclared = { ...witness, types: { ...witness.types, Order: undefined } };
    assert.equal(recognisePermit(typed(undeclared)), null);
  });

  it("reads an x402 Permit2 payment as a payment to its witness's `to`, only when x402's exact proxy spends it", () => {
    const payment = x402Permit2TypedData({ chainId: 31337, token, amount: 10_000n, payee: other, nonce: 5n, deadline: 1_900_000_000n });
    assert.deepEqual(payment.types, permit2WitnessTypes, "the types @x402/evm signs");
    assert.deepEqual(recognisePermit(typed(payment)), {
      kind: "PermitWitnessTransferFrom",
      chainId: 31337,
      spender: X402_EXACT_PERMIT2_PROXY,
      amounts: [{ token, amount: 10_000n }],
      deadline: 1_900_000_000n,
      payee: other,
      validAfter: 0n,
    });
    // Another spender could send the tokens anywhere: a plain witness transfer, no payee.
    const elsewhere = { ...payment, message: { ...payment.message, spender } };
    assert.equal(recognisePermit(typed(elsewhere))?.payee, undefined);
    // Nor on another contract than Permit2, nor with another witness.
    const lookalike = { ...payment, domain: { ...payment.domain, verifyingContract: token } };
    assert.equal(recognisePermit(typed(lookalike))?.payee, undefined);
    const extra = [...payment.types.Witness, { name: "extra", type: "bytes" }];
    const witnessed = {
      ...payment,
      types: { ...payment.types, Witness: extra },
      message: { ...payment.message, witness: { to: other, validAfter: "0", extra: "0x" } },
    };
    assert.equal(recognisePermit(typed(witnessed))?.payee, undefined);
  });

  it("reads a DAI-style permit (allowed: everything or nothing) and EIP-3009 authorizations (a transfer to `to`)", () => {
    const dai = (allowed: boolean, expiry: string) =>
      typed({
        domain: { name: "Dai Stablecoin", version: "1", chainId: 1, verifyingContract: token },
        types: {
          Permit: [
            { name: "holder", type: "address" },
            { name: "spender", type: "address" },
            { name: "nonce", type: "uint256" },
            { name: "expiry", type: "uint256" },
            { name: "allowed", type: "bool" },
          ],
        },
        primaryType: "Permit",
        message: { holder: owner, spender, nonce: "0", expiry, allowed },
      });
    assert.deepEqual(recognisePermit(dai(true, "0")), {
      kind: "DaiPermit",
      chainId: 1,
      spender,
      amounts: [{ token, amount: maxUint256 }],
      deadline: null,
    });
    assert.deepEqual(recognisePermit(dai(false, "5"))?.amounts, [{ token, amount: 0n }]);
    for (const kind of ["TransferWithAuthorization", "ReceiveWithAuthorization"]) {
      const authorization = typed({
        domain: { name: "USD Coin", version: "2", chainId: 8453, verifyingContract: token },
        types: {
          [kind]: ["from:address", "to:address", "value:uint256", "validAfter:uint256", "validBefore:uint256", "nonce:bytes32"].map(
            (entry) => ({ name: entry.split(":")[0], type: entry.split(":")[1] }),
          ),
        },
        primaryType: kind,
        message: { from: owner, to: other, value: "25", validAfter: "3", validBefore: "9", nonce: `0x${"00".repeat(32)}` },
      });
      assert.deepEqual(recognisePermit(authorization), {
        kind,
        chainId: 8453,
        spender: other,
        amounts: [{ token, amount: 25n }],
        deadline: 9n,
        validAfter: 3n,
      });
    }
  });

  it("does not dress up a look-alike: a Permit with other declared fields, or any other primary type, is not a permit", () => {
    const reordered = typed({
      ...eip2612,
      types: { Permit: [...(eip2612.types.Permit as object[])].reverse() },
    });
    assert.equal(recognisePermit(reordered), null);
    const extra = typed({
      ...eip2612,
      types: { Permit: [...(eip2612.types.Permit as object[]), { name: "memo", type: "string" }] },
    });
    assert.equal(recognisePermit(extra), null);
    assert.equal(recognisePermit(typed({ ...eip2612, primaryType: "toString" })), null);
    assert.equal(recognisePermit(typed({ ...eip2612, types: { Order: eip2612.types.Permit }, primaryType: "Order" })), null);
  });
});
