import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { bytesToHex, getAddress, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { nativeAccount } from "./native-signer";

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const privateKey = fc.bigInt({ min: 1n, max: N - 1n }).map((key) => `0x${key.toString(16).padStart(64, "0")}` as Hex);
const bytes = (length: number) => fc.uint8Array({ minLength: length, maxLength: length }).map((value) => bytesToHex(value));
const address = bytes(20).map((value) => getAddress(value));

describe("nativeAccount", () => {
  it("has viem's address and signs any hash and message exactly as viem's privateKeyToAccount does", async () => {
    await fc.assert(
      fc.asyncProperty(privateKey, bytes(32), fc.string(), async (key, hash, message) => {
        const viem = privateKeyToAccount(key);
        const native = nativeAccount(key);
        assert.equal(native.address, viem.address);
        assert.equal(await native.sign({ hash }), await viem.sign({ hash }));
        assert.equal(await native.signMessage({ message }), await viem.signMessage({ message }));
      }),
      { numRuns: 200 },
    );
  });

  it("signs typed data and EIP-1559 and EIP-7702 transactions exactly as viem does", async () => {
    await fc.assert(
      fc.asyncProperty(
        privateKey,
        address,
        fc.bigInt({ min: 0n, max: 10n ** 24n }),
        fc.nat({ max: 1_000_000 }),
        // calldata of every length class of RLP: short, one length byte, two, three (the relayer's redemptions are kilobytes)
        fc
          .oneof(
            fc.uint8Array({ maxLength: 300 }),
            fc.uint8Array({ minLength: 300, maxLength: 3_000 }),
            fc.uint8Array({ minLength: 65_536, maxLength: 66_000 }),
          )
          .map((data) => bytesToHex(data)),
        async (key, to, value, nonce, data) => {
          const viem = privateKeyToAccount(key);
          const native = nativeAccount(key);
          const typedData = {
            domain: { name: "DelegationManager", version: "1", chainId: 31337, verifyingContract: to },
            types: {
              Payment: [
                { name: "to", type: "address" },
                { name: "amount", type: "uint256" },
              ],
            },
            primaryType: "Payment" as const,
            message: { to, amount: value },
          };
          assert.equal(await native.signTypedData(typedData), await viem.signTypedData(typedData));
          const transaction = {
            type: "eip1559" as const,
            chainId: 31337,
            nonce,
            to,
            value,
            data,
            gas: 300_000n,
            maxFeePerGas: 2_000_000_000n,
            maxPriorityFeePerGas: 1_000_000n,
          };
          assert.equal(await native.signTransaction!(transaction), await viem.signTransaction(transaction));
          const authorization = await viem.signAuthorization({ chainId: 31337, address: to, nonce });
          const delegated = { ...transaction, type: "eip7702" as const, authorizationList: [authorization] };
          assert.equal(await native.signTransaction!(delegated), await viem.signTransaction(delegated));
        },
      ),
      { numRuns: 100 },
    );
  });
});
