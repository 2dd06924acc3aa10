import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { bytesToHex, keccak256 as viemKeccak256 } from "viem";
import { keccak256 } from "./keccak";
import { payloadDigest, type PreparedTransaction } from "./request-payload";

describe("native keccak256 (viem's hash on every input)", () => {
  it("hashes the empty input and a known vector as Ethereum does", () => {
    assert.equal(keccak256("0x"), "0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
    assert.equal(keccak256(new TextEncoder().encode("hello")), "0x1c8aff950685c2ed4bc3174f3472287b56d9517b9c948127319a09a7a36deac8");
  });

  it("gives viem's hash for random bytes across block boundaries, as bytes, as hex and as a view into a larger buffer", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.nat(8), (bytes, offset) => {
        const expected = viemKeccak256(bytes);
        assert.equal(keccak256(bytes), expected);
        assert.equal(keccak256(bytesToHex(bytes)), expected);
        const larger = new Uint8Array(offset + bytes.length + 3);
        larger.set(bytes, offset);
        assert.equal(keccak256(larger.subarray(offset, offset + bytes.length)), expected);
      }),
      { numRuns: 500 },
    );
  });

  it("reads hex as viem reads it, an odd length padded, and refuses what is not hex (viem hashes it some other way)", () => {
    assert.equal(keccak256("0xabc"), viemKeccak256("0xabc"));
    assert.equal(keccak256("0xABCDEF01"), viemKeccak256("0xABCDEF01"));
    assert.throws(() => keccak256("0xzz"), /Invalid byte sequence/);
    assert.throws(() => keccak256("0xabzz"), /Invalid byte sequence/);
  });

  it("gives a payload the digest viem gives it: a message, and a transaction before and after its nonce is fixed", () => {
    const transaction: PreparedTransaction = {
      type: "eip1559",
      chainId: 31337,
      to: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
      value: "10000000000000000",
      data: "0x",
      nonce: null,
      gas: "21000",
      maxFeePerGas: "2000000000",
      maxPriorityFeePerGas: "1000000000",
    };
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.nat(1_000_000), (message, nonce) => {
        for (const payload of [
          { kind: "sign_message" as const, message },
          { kind: "send_transaction" as const, transaction },
          { kind: "send_transaction" as const, transaction: { ...transaction, nonce } },
        ]) {
          assert.equal(payloadDigest(payload, keccak256), payloadDigest(payload));
        }
      }),
      { numRuns: 200 },
    );
  });
});
