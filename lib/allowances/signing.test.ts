import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { getAddress, parseEther, recoverTypedDataAddress, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { recoverAuthorizationAddress } from "viem/utils";
import { DAY, delegationTypedData, delegationsFor } from "./caveats";
import { address, NOW, testFramework } from "./framework.fixture";
import { readAllowanceToSign, signAllowance } from "./signing";

const framework = testFramework;
const person = privateKeyToAccount(generatePrivateKey());
const DELEGATE = address(0xbbbb);

function prepared(overrides: { delegate?: Address } = {}) {
  const delegations = delegationsFor(
    {
      chainId: 31337,
      delegator: person.address,
      delegate: overrides.delegate ?? DELEGATE,
      native: parseEther("0.01"),
      tokens: [],
      recipients: [address(0xcccc)],
      periodSeconds: DAY,
      startsAt: NOW,
      expiresAt: NOW + 7 * DAY,
      transactions: 3,
      overLimit: "ask",
    },
    framework,
    NOW,
  );
  return { framework, chainId: 31337, delegate: DELEGATE, delegations, authorizationNonce: 0 as number | null };
}

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
