// The person's side of revoking allowances, browser-safe: the ERC-4337 v0.7 UserOperation from their own (EIP-7702)
// account whose one call is a batch of DelegationManager.disableDelegation, one per delegation, and its EIP-712 form
// that their key signs. The browser builds it itself from the delegations it is shown (each read back as an
// allowance of this wallet), so a server that asked for anything else gets no signature. Gas prices are 0: the
// account owes the EntryPoint nothing, and the relayer pays the transaction.
// An allowance's own revocation is signed with it, in the same tap (`presignedRevocation`): its nonce's key is
// derived from the allowance's delegations, so it never collides with the account's key-0 nonce nor with another
// allowance's, and stays valid until it is used.
import {
  concat,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  keccak256,
  stringToHex,
  type Address,
  type Hex,
  type LocalAccount,
} from "viem";
import { toPackedUserOperation, type UserOperation } from "viem/account-abstraction";
import { DelegationManager, EIP7702StatelessDeleGator } from "@metamask/delegation-abis";
import { hashDelegation } from "@metamask/delegation-core";
import { delegationFromJson, readDelegation, type Delegation, type DelegationJson } from "./caveats";
import type { Framework } from "@/lib/wallet/delegation-framework";

/** ERC-7579 ModeCode for a batch of calls, reverting on failure. */
const BATCH_DEFAULT_MODE = `0x01${"00".repeat(31)}` as Hex;

const USER_OPERATION_TYPES = {
  PackedUserOperation: [
    { name: "sender", type: "address" },
    { name: "nonce", type: "uint256" },
    { name: "initCode", type: "bytes" },
    { name: "callData", type: "bytes" },
    { name: "accountGasLimits", type: "bytes32" },
    { name: "preVerificationGas", type: "uint256" },
    { name: "gasFees", type: "bytes32" },
    { name: "paymasterAndData", type: "bytes" },
    { name: "entryPoint", type: "address" },
  ],
} as const;

/** What the server asks the person to sign: the delegations (as JSON), the chain and the account's nonce. */
export type RevocationToSign = {
  framework: Framework;
  chainId: number;
  /** the person's address, whose delegations these are */
  delegator: Address;
  /** the account's EntryPoint nonce (key 0), as a decimal string */
  nonce: string;
  delegations: DelegationJson[];
};

/**
 * Gas for the operation's call, as signed: disabling one delegation runs about 62,500 gas inside the batch (hashing
 * it, one cold storage write, an event; measured by rehearsing the batch from the EntryPoint for every shape an
 * allowance can take, up to MAX_DELEGATIONS). Gas prices are 0, so a generous limit costs the person nothing and the
 * relayer pays only what is used; what the limit must never be is short, because handleOps succeeds, and is paid,
 * when the call inside it runs out of gas. Every send rehearses the call with exactly this limit first.
 */
export const revocationCallGas = (delegations: number) => 50_000n + 100_000n * BigInt(delegations);

/**
 * The limit revocations were signed with before: enough for three delegations, short for four or more. Stored
 * revocations signed with it are still read (revocation.ts), and sent only where the rehearsal shows it suffices.
 */
export const legacyRevocationCallGas = (delegations: number) => 80_000n + 40_000n * BigInt(delegations);

/**
 * The UserOperation that disables every one of `delegations`, for the account's EntryPoint nonce `nonce`, its call
 * limited to `callGas` (revocationCallGas unless a stored revocation was signed with another).
 */
export function revocationOperation(
  framework: Framework,
  delegator: Address,
  delegations: Delegation[],
  nonce: bigint,
  callGas: (delegations: number) => bigint = revocationCallGas,
): UserOperation<"0.7"> {
  const calls = delegations.map((delegation) => ({
    target: framework.DelegationManager,
    value: 0n,
    callData: encodeFunctionData({ abi: DelegationManager, functionName: "disableDelegation", args: [delegation] }),
  }));
  const batch = encodeAbiParameters(
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
    [calls],
  );
  return {
    sender: getAddress(delegator),
    nonce,
    callData: encodeFunctionData({ abi: EIP7702StatelessDeleGator, functionName: "execute", args: [BATCH_DEFAULT_MODE, batch] }),
    callGasLimit: callGas(calls.length),
    verificationGasLimit: 150_000n,
    preVerificationGas: 60_000n,
    maxFeePerGas: 0n,
    maxPriorityFeePerGas: 0n,
    signature: "0x",
  };
}

/** Separates these nonce keys from any other use of keccak256 over delegation hashes. */
const REVOCATION_KEY_TAG = stringToHex("agent-wallet:allowance-revocation:v1");

/**
 * The 192-bit EntryPoint nonce key of an allowance's own revocation: keccak256 of a tag and its delegations' hashes
 * (sorted), cut to 192 bits. Never 0 in practice (the account's ordinary key), and another allowance has another.
 */
export function revocationNonceKey(delegationHashes: Hex[]): bigint {
  const sorted = delegationHashes.map((hash) => hash.toLowerCase() as Hex).sort();
  return BigInt(keccak256(concat([REVOCATION_KEY_TAG, ...sorted]))) & ((1n << 192n) - 1n);
}

/** The delegations in the order a revocation disables them: by hash, as the server rebuilds it. */
function byHash(delegations: Delegation[]): Delegation[] {
  return delegations
    .map((delegation) => ({ delegation, hash: (hashDelegation(delegation) as Hex).toLowerCase() }))
    .sort((a, b) => (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0))
    .map(({ delegation }) => delegation);
}

/**
 * An allowance's own revocation: the operation disabling exactly its delegations, at sequence 0 of the key derived
 * from them. The browser signs it with the allowance; the server rebuilds it to check the signature and to send it.
 */
export function presignedRevocation(
  framework: Framework,
  delegator: Address,
  delegations: Delegation[],
  callGas = revocationCallGas,
): UserOperation<"0.7"> {
  const key = revocationNonceKey(delegations.map((delegation) => hashDelegation(delegation) as Hex));
  return revocationOperation(framework, delegator, byHash(delegations), key << 64n, callGas);
}

/** What the person signs to revoke (EIP-712, verified by their DeleGator account). */
export function operationTypedData(framework: Framework, chainId: number, operation: UserOperation<"0.7">) {
  return {
    domain: { name: "EIP7702StatelessDeleGator", version: "1", chainId, verifyingContract: operation.sender },
    types: USER_OPERATION_TYPES,
    primaryType: "PackedUserOperation" as const,
    message: { ...toPackedUserOperation({ ...operation, signature: "0x" }), entryPoint: framework.EntryPoint },
  };
}

/**
 * Signs the revocation with the key just unsealed: only delegations of this wallet that read as an allowance, only
 * their disabling. Returns the signature the server relays.
 */
export async function signRevocation(account: LocalAccount, input: RevocationToSign): Promise<Hex> {
  if (!input.chainId) throw new Error("A revocation names its chain.");
  if (getAddress(input.delegator) !== getAddress(account.address)) throw new Error("These allowances are not this wallet's.");
  if (!input.delegations.length) throw new Error("Nothing to revoke.");
  const delegations = input.delegations.map(delegationFromJson);
  for (const delegation of delegations) {
    if (getAddress(delegation.delegator) !== getAddress(account.address)) throw new Error("A delegation is not from this wallet.");
    readDelegation(input.framework, delegation);
  }
  const operation = revocationOperation(input.framework, account.address, delegations, BigInt(input.nonce));
  return account.signTypedData(operationTypedData(input.framework, input.chainId, operation));
}
