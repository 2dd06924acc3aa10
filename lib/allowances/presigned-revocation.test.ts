import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { concat, decodeAbiParameters, decodeFunctionData, keccak256, stringToHex, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { hashDelegation } from "@metamask/delegation-core";
import { DelegationManager, EIP7702StatelessDeleGator } from "@metamask/delegation-abis";
import { address, preparedAllowance, testFramework } from "./framework.fixture";
import { signAllowance } from "./signing";
import { operationTypedData, presignedRevocation, revocationNonceKey } from "./revocation-operation";
import { checkRevocation } from "./allowances";

const framework = testFramework;
const person = privateKeyToAccount(generatePrivateKey());
const CHAIN = 31337;

const prepared = (tokens = 0) =>
  preparedAllowance(person.address, { tokens: Array.from({ length: tokens }, (_, index) => address(0xe000 + index)) });

const hashes = (delegations: { salt: bigint }[]) =>
  delegations.map((delegation) => hashDelegation(delegation as Parameters<typeof hashDelegation>[0]) as Hex);

describe("an allowance's pre-signed revocation", () => {
  it("has a 192-bit nonce key of its delegations' hashes, in any order, and sequence 0", async () => {
    const { delegations } = prepared(2);
    const sorted = hashes(delegations).sort();
    const expected = BigInt(keccak256(concat([stringToHex("agent-wallet:allowance-revocation:v1"), ...sorted]))) & ((1n << 192n) - 1n);
    assert.equal(revocationNonceKey(hashes(delegations)), expected);
    assert.equal(revocationNonceKey(hashes(delegations).reverse()), expected);
    assert.ok(expected > 0n && expected < 1n << 192n);
    // another allowance (other random salts) has another key
    assert.notEqual(revocationNonceKey(hashes(prepared(2).delegations)), expected);
    const operation = presignedRevocation(framework, person.address, delegations);
    assert.equal(operation.nonce >> 64n, expected);
    assert.equal(operation.nonce & ((1n << 64n) - 1n), 0n, "sequence 0");
  });

  it("disables exactly the allowance's delegations, ordered by hash, at no gas price", () => {
    const { delegations } = prepared(1);
    const operation = presignedRevocation(framework, person.address, delegations);
    assert.equal(operation.maxFeePerGas, 0n);
    assert.equal(operation.maxPriorityFeePerGas, 0n);
    const { args } = decodeFunctionData({ abi: EIP7702StatelessDeleGator, data: operation.callData });
    const [calls] = decodeAbiParameters(
      [
        {
          type: "tuple[]",
          components: [
            { name: "target", type: "address" },
            { name: "value", type: "uint256" },
            { name: "callData", type: "bytes" },
          ],
        },
      ],
      args![1] as Hex,
    );
    const disabled = calls.map((call) => {
      assert.equal(call.target, framework.DelegationManager);
      assert.equal(call.value, 0n);
      const decoded = decodeFunctionData({ abi: DelegationManager, data: call.callData });
      assert.equal(decoded.functionName, "disableDelegation");
      return hashDelegation(decoded.args![0] as Parameters<typeof hashDelegation>[0]) as Hex;
    });
    assert.deepEqual(disabled, hashes(delegations).sort());
  });

  it("is signed with the allowance by the person's key, and the server's check accepts only that", async () => {
    const signed = await signAllowance(person, prepared(1));
    const input = { chainId: CHAIN, delegator: person.address, delegations: signed.delegations, revocation: signed.revocation };
    assert.doesNotThrow(() => checkRevocation(framework, input));

    // another key's signature over the same operation
    const stranger = privateKeyToAccount(generatePrivateKey());
    const operation = presignedRevocation(framework, person.address, signed.delegations);
    const strangers = await stranger.signTypedData(operationTypedData(framework, CHAIN, operation));
    assert.throws(() => checkRevocation(framework, { ...input, revocation: strangers }), /not the wallet's signature/);
    // the person's signature over the revocation of other delegations
    const other = await signAllowance(person, prepared(1));
    assert.throws(() => checkRevocation(framework, { ...input, revocation: other.revocation }), /not the wallet's signature/);
    // over the same delegations at the account's ordinary nonce (key 0)
    const keyZero = await person.signTypedData(operationTypedData(framework, CHAIN, { ...operation, nonce: 0n }));
    assert.throws(() => checkRevocation(framework, { ...input, revocation: keyZero }), /not the wallet's signature/);
    // on another chain, or a malformed signature
    const elsewhere = await person.signTypedData(operationTypedData(framework, 1, operation));
    assert.throws(() => checkRevocation(framework, { ...input, revocation: elsewhere }), /not the wallet's signature/);
    assert.throws(() => checkRevocation(framework, { ...input, revocation: `0x${"00".repeat(65)}` }), /not the wallet's signature/);
  });
});
