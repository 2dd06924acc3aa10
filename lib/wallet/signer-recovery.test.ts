import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  bytesToHex,
  numberToHex,
  hexToBigInt,
  numberToBytes,
  parseSignature,
  parseTransaction,
  recoverMessageAddress,
  recoverTransactionAddress,
  recoverTypedDataAddress,
  toRlp,
  type Hex,
  type TransactionSerialized,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { recoverMessageSigner, recoverTransactionSigner, recoverTypedDataSigner } from "./signer-recovery";

/** secp256k1's group order: r, s and a private key lie in [1, N). */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** The address, or "refused" for anything thrown: what an approval sees of a recovery. */
async function verdict(recover: () => unknown): Promise<unknown> {
  try {
    return await recover();
  } catch {
    return "refused";
  }
}

const privateKey = fc
  .uint8Array({ minLength: 32, maxLength: 32 })
  .map((bytes) => bytesToHex(bytes))
  .filter((key) => BigInt(key) > 0n && BigInt(key) < N);
const message = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.uint8Array({ maxLength: 200 }).map((raw) => ({ raw })),
);
const int = (value: bigint): Hex => (value === 0n ? "0x" : bytesToHex(numberToBytes(value)));
const word = (value: bigint) => numberToHex(value, { size: 32 }).slice(2);

/** A signature's parts put back together, as an agent or a hostile client could send them. */
function assembled(r: bigint, s: bigint, v: number): Hex {
  return `0x${word(r)}${word(s)}${v.toString(16).padStart(2, "0")}`;
}

const typedData = {
  domain: { name: "Bench", version: "1", chainId: 31337, verifyingContract: "0x5FbDB2315678afecb367f032d93F642f64180aa3" },
  types: {
    Note: [
      { name: "text", type: "string" },
      { name: "amount", type: "uint256" },
    ],
  },
  primaryType: "Note",
} as const;

describe("signer recovery with libsecp256k1 (viem's verdict on every input)", () => {
  it("recovers the signer of a message as viem does, for random keys and messages", async () => {
    await fc.assert(
      fc.asyncProperty(privateKey, message, async (key, signed) => {
        const account = privateKeyToAccount(key);
        const signature = await account.signMessage({ message: signed });
        assert.equal(recoverMessageSigner(signed, signature), account.address);
        assert.equal(recoverMessageSigner(signed, signature), await recoverMessageAddress({ message: signed, signature }));
      }),
      { numRuns: 100 },
    );
  });

  it("recovers the signer of typed data as viem does", async () => {
    await fc.assert(
      fc.asyncProperty(privateKey, fc.string(), fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }), async (key, text, amount) => {
        const account = privateKeyToAccount(key);
        const definition = { ...typedData, message: { text, amount } };
        const signature = await account.signTypedData(definition);
        assert.equal(recoverTypedDataSigner(definition, signature), account.address);
        assert.equal(recoverTypedDataSigner(definition, signature), await recoverTypedDataAddress({ ...definition, signature }));
      }),
      { numRuns: 50 },
    );
  });

  it("gives viem's verdict on random r and s with each accepted v, and on random bytes of about that length", async () => {
    const acceptedV = fc.tuple(fc.uint8Array({ minLength: 64, maxLength: 64 }), fc.constantFrom(0, 1, 27, 28));
    const anyBytes = fc.uint8Array({ minLength: 63, maxLength: 67 });
    const bytes = fc.oneof(
      acceptedV.map(([rs, v]) => Uint8Array.of(...rs, v)),
      anyBytes,
    );
    let recovered = 0;
    await fc.assert(
      fc.asyncProperty(bytes, message, async (candidate, signed) => {
        const signature = bytesToHex(candidate);
        const expected = await verdict(() => recoverMessageAddress({ message: signed, signature }));
        assert.deepEqual(await verdict(() => recoverMessageSigner(signed, signature)), expected);
        if (expected !== "refused") recovered++;
      }),
      { numRuns: 400 },
    );
    // About half of random r are a point's x coordinate: both verdicts must have been exercised.
    assert.ok(recovered > 50, `${recovered} of 400 recovered`);
  });

  it("gives viem's verdict for every v, a high s, r or s out of range, and malformed hex", async () => {
    const account = privateKeyToAccount(`0x${"11".repeat(32)}`);
    const signed = "approve me";
    const signature = await account.signMessage({ message: signed });
    const { r, s, yParity } = parseSignature(signature);
    const [R, S] = [BigInt(r), BigInt(s)];
    const cases: Record<string, Hex> = {
      truncated: signature.slice(0, 130) as Hex,
      "one byte more": `${signature}00`,
      "odd length, v as one digit": `0x${signature.slice(2, 130)}${yParity}`,
      "not hex": `0x${"zz".repeat(65)}`,
      "no 0x": signature.slice(2) as Hex,
      "r = 0": assembled(0n, S, 27 + yParity),
      "s = 0": assembled(R, 0n, 27 + yParity),
      "r = n": assembled(N, S, 27 + yParity),
      "s = n": assembled(R, N, 27 + yParity),
      "r = n + 1": assembled(N + 1n, S, 27 + yParity),
      "r not an x coordinate": assembled(5n, S, 27 + yParity),
      "high s, parity flipped": assembled(R, N - S, 28 - yParity),
      "high s, parity kept": assembled(R, N - S, 27 + yParity),
    };
    for (let v = 0; v < 256; v++) cases[`v = ${v}`] = assembled(R, S, v);
    let accepted = 0;
    for (const [name, candidate] of Object.entries(cases)) {
      const expected = await verdict(() => recoverMessageAddress({ message: signed, signature: candidate }));
      assert.deepEqual(await verdict(() => recoverMessageSigner(signed, candidate)), expected, name);
      if (expected === account.address) accepted++;
    }
    // The cases that recover this key: v 0/1/27/28 with the right parity (two), the odd-length v, and the high s
    // with its parity flipped (viem does not refuse a high s in recovery, so neither does this).
    assert.equal(accepted, 4);
    assert.equal(await recoverMessageSigner(signed, cases["high s, parity flipped"]), account.address);
  });

  it("recovers the signer of a transaction as viem does: EIP-1559, EIP-155 and pre-155 legacy", async () => {
    const transaction = fc.record({
      key: privateKey,
      nonce: fc.nat({ max: 1000 }),
      value: fc.bigInt({ min: 0n, max: 10n ** 24n }),
      data: fc.uint8Array({ maxLength: 68 }).map((bytes) => bytesToHex(bytes)),
      chainId: fc.constantFrom(1, 31337, 8453, 2 ** 40),
      legacy: fc.constantFrom("eip1559", "eip155", "pre155"),
    });
    await fc.assert(
      fc.asyncProperty(transaction, async ({ key, nonce, value, data, chainId, legacy }) => {
        const account = privateKeyToAccount(key);
        const to = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
        const serialized = (await account.signTransaction(
          legacy === "eip1559"
            ? { type: "eip1559", chainId, nonce, to, value, data, gas: 21000n, maxFeePerGas: 2n, maxPriorityFeePerGas: 1n }
            : { type: "legacy", chainId: legacy === "eip155" ? chainId : undefined, nonce, to, value, data, gas: 21000n, gasPrice: 2n },
        )) as TransactionSerialized;
        assert.equal(recoverTransactionSigner(serialized), account.address);
        assert.equal(recoverTransactionSigner(serialized), await recoverTransactionAddress({ serializedTransaction: serialized }));
      }),
      { numRuns: 60 },
    );
  });

  it("gives viem's verdict on a transaction's odd signatures: every yParity and v, high s, r or s out of range", async () => {
    const account = privateKeyToAccount(`0x${"22".repeat(32)}`);
    const to = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
    const signed = parseTransaction(
      await account.signTransaction({
        type: "eip1559",
        chainId: 31337,
        nonce: 7,
        to,
        gas: 21000n,
        value: 1n,
        maxFeePerGas: 2n,
        maxPriorityFeePerGas: 1n,
      }),
    );
    const [R, S] = [hexToBigInt(signed.r!), hexToBigInt(signed.s!)];
    // Encoded by hand, so that any v or yParity can be put in, as a hostile client could.
    const fields1559 = [int(31337n), int(7n), int(1n), int(2n), int(21000n), to, int(1n), "0x", []] as const;
    const eip1559 = (yParity: bigint, r: bigint, s: bigint) =>
      `0x02${toRlp([...fields1559, int(yParity), int(r), int(s)]).slice(2)}` as TransactionSerialized;
    const legacy = (v: bigint, r: bigint, s: bigint) =>
      toRlp([int(7n), int(2n), int(21000n), to, int(1n), "0x", int(v), int(r), int(s)]) as TransactionSerialized;
    const variants: [string, TransactionSerialized][] = [];
    for (const [label, r, s] of [
      ["as signed", R, S],
      ["high s", R, N - S],
      ["r = 0", 0n, S],
      ["s = 0", R, 0n],
      ["r = n", N, S],
      ["s = n", R, N],
      ["r past 32 bytes", 2n ** 256n + R, S],
    ] as const) {
      for (const yParity of [0n, 1n, 2n, 27n, 28n]) variants.push([`${label}, 1559 yParity ${yParity}`, eip1559(yParity, r, s)]);
      for (const v of [0n, 1n, 2n, 27n, 28n, 29n, 34n, 35n, 36n, 37n, 31337n * 2n + 35n, 31337n * 2n + 36n, 2n ** 64n + 35n])
        variants.push([`${label}, legacy v ${v}`, legacy(v, r, s)]);
    }
    let accepted = 0;
    for (const [name, serialized] of variants) {
      const expected = await verdict(() => recoverTransactionAddress({ serializedTransaction: serialized }));
      assert.deepEqual(await verdict(() => recoverTransactionSigner(serialized)), expected, name);
      if (expected !== "refused") accepted++;
    }
    assert.ok(accepted > 0 && accepted < variants.length, `${accepted} of ${variants.length} recovered: the cases must include both`);
  });
});
