import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { encodeDelegations, hashDelegation } from "@metamask/delegation-core";
import { bytesToHex, getAddress, hashTypedData, type Hex } from "viem";
import { delegationTypedData, type Delegation } from "./caveats";
import { delegationDigest, delegationHash, encodedDelegations } from "./delegation-encoding";
import type { Framework } from "@/lib/wallet/delegation-framework";

const hex = (min: number, max: number) => fc.uint8Array({ minLength: min, maxLength: max }).map((bytes) => bytesToHex(bytes) as Hex);
const address = hex(20, 20).map((value) => getAddress(value));
const caveat = fc.record({ enforcer: address, terms: hex(0, 200), args: hex(0, 40) });
const delegation: fc.Arbitrary<Delegation> = fc.record({
  delegate: address,
  delegator: address,
  authority: hex(32, 32),
  caveats: fc.array(caveat, { maxLength: 6 }),
  salt: fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }),
  signature: hex(0, 65),
});

describe("delegation encoding", () => {
  it("hashes any delegation as @metamask/delegation-core does", () => {
    fc.assert(fc.property(delegation, (given) => assert.equal(delegationHash(given), hashDelegation(given))));
  });

  it("encodes any chain of delegations as @metamask/delegation-core does, a delegation met again as the first time", () => {
    fc.assert(
      fc.property(fc.array(delegation, { minLength: 0, maxLength: 3 }), delegation, (chain, root) => {
        assert.equal(encodedDelegations(chain), (encodeDelegations(chain) as Hex).toLowerCase());
        // the same root object under two leaves, as a payment's root is: its encoding is kept, and still right
        for (const leaf of chain.slice(0, 2))
          assert.equal(encodedDelegations([leaf, root]), (encodeDelegations([leaf, root]) as Hex).toLowerCase());
      }),
    );
  });

  it("gives the digest viem's signTypedData signs, for any delegation, chain and manager", () => {
    fc.assert(
      fc.property(delegation, fc.integer({ min: 1, max: 2 ** 40 }), address, (given, chainId, manager) =>
        assert.equal(
          delegationDigest(delegationHash(given), chainId, manager),
          hashTypedData(delegationTypedData({ DelegationManager: manager } as Framework, chainId, given)),
        ),
      ),
    );
  });
});
