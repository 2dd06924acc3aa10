import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { getAddress, recoverTypedDataAddress, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { recoverAuthorizationAddress } from "viem/utils";
import { delegationTypedData } from "./caveats";
import { address, preparedAllowance, testFramework } from "./framework.fixture";
import { readAllowanceToSign, signAllowance } from "./signing";

const framework = testFramework;
const person = privateKeyToAccount(generatePrivateKey());

const prepared = (overrides: { delegate?: Address } = {}) => preparedAllowance(person.address, overrides);

describe("signing an allowance in the browser", () => {
  it("signs the authorization for this chain's DeleGator and each delegation, with the person's key", async () => {
    const input = prepared();
    const signed = await signAllowance(person, input);
    const authorization = signed.authorization!;
    assert.equal(authorization.chainId, 31337);
    assert.equal(getAddress(authorization.address), framework.implementations.EIP7702StatelessDeleGatorImpl);
    assert.equal(await recoverAuthorizationAddress({ authorization }), person.address);
    for (const delegation of signed.delegations) {
      const signer = await recoverTypedDataAddress({
        ...delegationTypedData(framework, 31337, delegation),
        signature: delegation.signature,
      });
      assert.equal(signer, person.address);
    }
    assert.equal((await signAllowance(person, { ...input, authorizationNonce: null })).authorization, undefined);
  });

  it("signs nothing the server prepared for another delegate, another wallet, chain 0 or without a salt", async () => {
    await assert.rejects(signAllowance(person, prepared({ delegate: address(0xdead) })), /another delegate/);
    const other = privateKeyToAccount(generatePrivateKey());
    assert.throws(() => readAllowanceToSign(other.address, prepared()), /not from this wallet/);
    await assert.rejects(signAllowance(person, { ...prepared(), chainId: 0 }), /chain 0/);
    const input = prepared();
    await assert.rejects(signAllowance(person, { ...input, delegations: [{ ...input.delegations[0], salt: 0n }] }), /random salt/);
    await assert.rejects(signAllowance(person, { ...input, delegations: [{ ...input.delegations[0], caveats: [] }] }), /without caveats/);
  });
});
