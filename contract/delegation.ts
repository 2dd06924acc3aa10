// A delegation of MetaMask's Delegation Framework as its DelegationManager verifies it (EIP-712): what the person signs
// for an allowance, and what an agent signs to pass a slice of its own allowance on to another key. One definition for
// the server, the person's browser and the SDK.

const DELEGATION_TYPES = {
  Delegation: [
    { name: "delegate", type: "address" },
    { name: "delegator", type: "address" },
    { name: "authority", type: "bytes32" },
    { name: "caveats", type: "Caveat[]" },
    { name: "salt", type: "uint256" },
  ],
  Caveat: [
    { name: "enforcer", type: "address" },
    { name: "terms", type: "bytes" },
  ],
} as const;

type Hex = `0x${string}`;

/** A delegation's signed fields (the caveats' `args` are the redeemer's, not signed). */
export type SignedDelegationFields = {
  delegate: Hex;
  delegator: Hex;
  authority: Hex;
  caveats: readonly { enforcer: Hex; terms: Hex }[];
  salt: bigint;
};

/** The EIP-712 typed data of a delegation, as the DelegationManager at `manager` on `chainId` verifies it. */
export function delegationTypedData(manager: Hex, chainId: number, delegation: SignedDelegationFields) {
  return {
    domain: { name: "DelegationManager", version: "1", chainId, verifyingContract: manager },
    types: DELEGATION_TYPES,
    primaryType: "Delegation" as const,
    message: {
      delegate: delegation.delegate,
      delegator: delegation.delegator,
      authority: delegation.authority,
      caveats: delegation.caveats.map(({ enforcer, terms }) => ({ enforcer, terms })),
      salt: delegation.salt,
    },
  };
}
