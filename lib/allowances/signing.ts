// The person's side of creating an allowance, browser-safe: with the key just unsealed from the passkey, sign the
// EIP-7702 authorization (only when the account lacks the DeleGator's code, only for this chain's DeleGator, never
// for chain 0) and each delegation the server prepared — after reading every one back from its caveats, so that a
// server that prepared anything but the allowance described gets no signature — and the allowance's own revocation,
// which the page builds itself from those delegations (revocation-operation.ts) and which can only disable them.
import { getAddress, type Address, type Hex, type LocalAccount, type SignedAuthorization } from "viem";
import { hashDelegation, ROOT_AUTHORITY } from "@metamask/delegation-core";
import {
  delegationFromJson,
  delegationTypedData,
  readDelegation,
  type Delegation,
  type DelegationJson,
  type DelegationMeaning,
  type OverLimit,
  type PerPayment,
} from "./caveats";
import type { Framework } from "@/lib/wallet/delegation-framework";
import { operationTypedData, presignedRevocation } from "./revocation-operation";

export type AllowanceToSign = {
  framework: Framework;
  chainId: number;
  /** the server's delegate key, as the page announced it */
  delegate: Address;
  delegations: Delegation[];
  /** the account's transaction nonce when it still needs the DeleGator's code; null when it has it already */
  authorizationNonce: number | null;
};

/** Every delegation decoded, or an error naming what is wrong: what the page describes before the passkey tap. */
export function readAllowanceToSign(account: Address, input: AllowanceToSign): DelegationMeaning[] {
  if (!input.chainId) throw new Error("An allowance names its chain; chain 0 would be valid on every chain.");
  if (!input.delegations.length) throw new Error("Nothing to sign.");
  return input.delegations.map((delegation) => {
    if (getAddress(delegation.delegator) !== getAddress(account)) throw new Error("A delegation is not from this wallet.");
    if (getAddress(delegation.delegate) !== getAddress(input.delegate)) throw new Error("A delegation names another delegate.");
    if (delegation.authority.toLowerCase() !== ROOT_AUTHORITY.toLowerCase()) throw new Error("A delegation is passed on from another.");
    if (delegation.salt === 0n) throw new Error("A delegation lacks its random salt.");
    return readDelegation(input.framework, delegation);
  });
}

/** Signs what `readAllowanceToSign` accepted: the authorization if needed, each delegation, then their revocation. */
export async function signAllowance(
  account: LocalAccount,
  input: AllowanceToSign,
): Promise<{ delegations: Delegation[]; authorization?: SignedAuthorization; revocation: Hex }> {
  readAllowanceToSign(account.address, input);
  if (!account.signAuthorization) throw new Error("This key cannot sign an EIP-7702 authorization.");
  const authorization =
    input.authorizationNonce === null
      ? undefined
      : await account.signAuthorization({
          contractAddress: input.framework.implementations.EIP7702StatelessDeleGatorImpl,
          chainId: input.chainId,
          nonce: input.authorizationNonce,
        });
  const delegations: Delegation[] = [];
  for (const delegation of input.delegations) {
    const signature = await account.signTypedData(delegationTypedData(input.framework, input.chainId, delegation));
    delegations.push({ ...delegation, signature });
  }
  const revocation = await account.signTypedData(
    operationTypedData(input.framework, input.chainId, presignedRevocation(input.framework, account.address, delegations)),
  );
  return { delegations, authorization, revocation };
}

/**
 * What the person's passkey approval is bound to: the chain, their choice above the allowance, each delegation's
 * hash (its content, the signature aside), and for any payee the most per payment (the server's limit, not signed).
 * The page binds the unsigned delegations; the server checks that the signed ones it receives have the same hashes,
 * so the tap approves exactly what is then signed. The pre-signed revocation
 * needs no place of its own: it is derived from these delegations alone (their disabling, at a nonce key of their
 * hashes), and the server accepts only that one.
 */
export function allowanceBinding(allowance: {
  chainId: number;
  overLimit: OverLimit;
  delegations: DelegationJson[];
  perPayment?: PerPayment;
}) {
  return {
    chainId: allowance.chainId,
    overLimit: allowance.overLimit,
    delegations: allowance.delegations.map((delegation) => hashDelegation(delegationFromJson(delegation)) as Hex),
    perPayment: allowance.perPayment ?? [],
  };
}
