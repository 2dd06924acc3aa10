// The one-time leaf of an x402 payment: the delegate key passes on, from the person's allowance delegation, exactly
// one token transfer to one payee, redeemable only by the requirement's facilitators and only until the payment
// times out. The chain enforces each limit; the allowance's own caveats (period cap, recipients, expiry) still apply.
import { encodeFunctionData, erc20Abi, type Address, type Hex } from "viem";
import {
  ANY_BENEFICIARY,
  createERC20TransferAmountTerms,
  createExactCalldataTerms,
  createRedeemerTerms,
  createTimestampTerms,
  createValueLteTerms,
} from "@metamask/delegation-core";
import { randomSalt, type Delegation } from "@/lib/allowances/caveats";
import { delegationDigest, delegationHash, encodedDelegations } from "@/lib/allowances/delegation-encoding";
import { delegateAccount } from "@/lib/allowances/delegate-key";
import type { DelegationState } from "@/lib/allowances/allowances";
import type { Framework } from "@/lib/wallet/delegation-framework";
import type { DelegationPayload } from "./answer";

export type LeafTerms = {
  chainId: number;
  asset: Address;
  payee: Address;
  amount: bigint;
  redeemers: Address[];
  /** unix seconds after which the leaf can no longer be redeemed */
  expiresAt: number;
};

/** A leaf to be signed: its hash names it (the signature is not hashed), so its hold can be stored before it is signed. */
export type PaymentLeaf = { leaf: Delegation; leafHash: Hex; root: DelegationState; terms: LeafTerms };

/** The leaf of a payment under `root`, from the delegate key, unsigned. */
export async function paymentLeaf(
  framework: Framework,
  paymentEnforcers: NonNullable<Framework["paymentEnforcers"]>,
  root: DelegationState,
  terms: LeafTerms,
): Promise<PaymentLeaf> {
  const delegate = await delegateAccount();
  const enforcers = framework.caveatEnforcers;
  const transfer = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [terms.payee, terms.amount] });
  const leaf: Delegation = {
    // open: the Redeemer caveat, not the delegate field, says who may redeem (a requirement may name several)
    delegate: ANY_BENEFICIARY,
    delegator: delegate.address,
    authority: root.hash,
    caveats: [
      { enforcer: paymentEnforcers.RedeemerEnforcer, terms: createRedeemerTerms({ redeemers: terms.redeemers }), args: "0x" },
      { enforcer: enforcers.ValueLteEnforcer, terms: createValueLteTerms({ maxValue: 0n }), args: "0x" },
      {
        enforcer: paymentEnforcers.ERC20TransferAmountEnforcer,
        terms: createERC20TransferAmountTerms({ tokenAddress: terms.asset, maxAmount: terms.amount }),
        args: "0x",
      },
      // ERC20TransferAmount caps the token and the sum, not the recipient: the exact call pins the payee too.
      { enforcer: enforcers.ExactCalldataEnforcer, terms: createExactCalldataTerms({ calldata: transfer }), args: "0x" },
      {
        enforcer: enforcers.TimestampEnforcer,
        terms: createTimestampTerms({ afterThreshold: 0, beforeThreshold: terms.expiresAt }),
        args: "0x",
      },
    ],
    salt: randomSalt(),
    signature: "0x",
  };
  return { leaf, leafHash: delegationHash(leaf), root, terms };
}

/** The leaf signed by the delegate key, and the erc7710 payload that carries it with its root. */
export async function signLeaf(framework: Framework, { leaf, leafHash, root, terms }: PaymentLeaf): Promise<DelegationPayload> {
  const delegate = await delegateAccount();
  const signature = await delegate.sign({ hash: delegationDigest(leafHash, terms.chainId, framework.DelegationManager) });
  const signed = { ...leaf, signature };
  return {
    delegationManager: framework.DelegationManager,
    permissionContext: encodedDelegations([signed, root.delegation]),
    delegator: root.delegation.delegator,
  };
}

/** The signed leaf, its hash, and the erc7710 payload that carries it with its root. */
export async function signPaymentLeaf(
  framework: Framework,
  paymentEnforcers: NonNullable<Framework["paymentEnforcers"]>,
  root: DelegationState,
  terms: LeafTerms,
): Promise<{ leafHash: Hex; payload: DelegationPayload }> {
  const unsigned = await paymentLeaf(framework, paymentEnforcers, root, terms);
  return { leafHash: unsigned.leafHash, payload: await signLeaf(framework, unsigned) };
}
