// A delegation's hash (its EIP-712 struct hash, by which the DelegationManager and the enforcers key it) and the ABI
// encoding of a chain of delegations (a redemption's permission context), exactly as @metamask/delegation-core computes
// them, for a fraction of the CPU: its JavaScript took about 1 ms a hash and 1.8 ms an encoding, several of each on
// every payment. Here viem's ABI encoder and the native Keccak (lib/wallet/keccak.ts); the test holds both to the
// package's.
import { concat, domainSeparator, encodeAbiParameters, pad, stringToHex, toHex, type Address, type Hex } from "viem";
import { keccak256 } from "@/lib/wallet/keccak";
import type { Delegation } from "./caveats";

const CAVEAT_TYPEHASH = keccak256(stringToHex("Caveat(address enforcer,bytes terms)"));
const DELEGATION_TYPEHASH = keccak256(
  stringToHex(
    "Delegation(address delegate,address delegator,bytes32 authority,Caveat[] caveats,uint256 salt)Caveat(address enforcer,bytes terms)",
  ),
);

/** The delegation's EIP-712 struct hash (its signature and the caveats' args are not part of it). */
export function delegationHash(delegation: Pick<Delegation, "delegate" | "delegator" | "authority" | "caveats" | "salt">): Hex {
  const caveats = delegation.caveats.map((caveat) => keccak256(concat([CAVEAT_TYPEHASH, pad(caveat.enforcer), keccak256(caveat.terms)])));
  return keccak256(
    concat([
      DELEGATION_TYPEHASH,
      pad(delegation.delegate),
      pad(delegation.delegator),
      delegation.authority,
      keccak256(concat(caveats)),
      toHex(delegation.salt, { size: 32 }),
    ]),
  );
}

const separators = new Map<string, Hex>();

/**
 * What the delegate key signs for a delegation whose struct hash (delegationHash) is `hash`: the EIP-712 digest of
 * the DelegationManager's domain on `chainId` and that hash, as viem's hashTypedData computes it from
 * delegationTypedData (the test holds it so), without its JavaScript Keccak and type encoding.
 */
export function delegationDigest(hash: Hex, chainId: number, delegationManager: Address): Hex {
  const key = `${chainId}:${delegationManager}`;
  let separator = separators.get(key);
  if (!separator) {
    separator = domainSeparator({ domain: { name: "DelegationManager", version: "1", chainId, verifyingContract: delegationManager } });
    separators.set(key, separator);
  }
  return keccak256(concat(["0x1901", separator, hash]));
}

const DELEGATIONS = [
  {
    type: "tuple[]",
    components: [
      { name: "delegate", type: "address" },
      { name: "delegator", type: "address" },
      { name: "authority", type: "bytes32" },
      {
        name: "caveats",
        type: "tuple[]",
        components: [
          { name: "enforcer", type: "address" },
          { name: "terms", type: "bytes" },
          { name: "args", type: "bytes" },
        ],
      },
      { name: "salt", type: "uint256" },
      { name: "signature", type: "bytes" },
    ],
  },
] as const;

const DELEGATION = [{ type: "tuple", components: DELEGATIONS[0].components }] as const;

/** Each delegation's own ABI encoding (a tuple's, relative to its start), kept for the delegation object's life. */
const tupleEncodings = new WeakMap<Delegation, string>();

function tupleEncoding(delegation: Delegation): string {
  let encoded = tupleEncodings.get(delegation);
  if (encoded === undefined) {
    // a dynamic tuple encoded alone: the offset word (0x20), then the tuple
    encoded = encodeAbiParameters(DELEGATION, [delegation]).slice(2 + 64);
    tupleEncodings.set(delegation, encoded);
  }
  return encoded;
}

const word = (value: number) => value.toString(16).padStart(64, "0");

/**
 * A chain of delegations, leaf first, as redeemDelegations takes it: `Delegation[]` ABI-encoded — the array's offset,
 * its length, each element's offset from the first element's, then the elements. An element's encoding does not
 * depend on its neighbours, so each delegation is encoded once (a payment's root, stored and decoded once per
 * process, is the same object on every payment).
 */
export function encodedDelegations(chain: Delegation[]): Hex {
  const elements = chain.map(tupleEncoding);
  const offsets: string[] = [];
  let offset = 32 * chain.length;
  for (const element of elements) {
    offsets.push(word(offset));
    offset += element.length / 2;
  }
  return `0x${word(32)}${word(chain.length)}${offsets.join("")}${elements.join("")}`;
}
