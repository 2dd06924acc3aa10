// Paying from an allowance with no tap: the payment is matched to one of the allowance's delegations, checked
// against what its enforcers say is left, simulated, and only then redeemed on-chain through the relayer. Spends of
// one allowance take turns under a database lease, so each is checked against the chain as the previous one left it:
// of many concurrent spends near the cap exactly as many are sent as fit, and none that is sent reverts.
import {
  concat,
  decodeFunctionData,
  encodeFunctionData,
  erc20Abi,
  formatUnits,
  getAddress,
  pad,
  toHex,
  type Address,
  type Hex,
} from "viem";
import { createExactExecutionTerms, createLimitedCallsTerms, encodeDelegations } from "@metamask/delegation-core";
import { DelegationManager } from "@metamask/delegation-abis";
import { recordAudit } from "@/lib/audit";
import { randomId } from "@/lib/crypto";
import { db } from "@/lib/db";
import { onChain } from "@/lib/wallet/chains";
import { AppError } from "@/lib/http/errors";
import { delegationState, findAllowance, frameworkFor, type DelegationState } from "./allowances";
import { delegationTypedData, randomSalt, type Delegation, type OverLimit } from "./caveats";
import { delegateAccount } from "./delegate-key";
import type { Framework } from "./framework";
import { relay, relayerOn, simulate } from "./relay";
import { withLease } from "./lease";

/** DelegationManager's ModeCode for one call, reverting on failure (ERC-7579 "single, default"). */
const SINGLE_DEFAULT_MODE = `0x${"00".repeat(32)}` as Hex;

export type RefusalReason =
  "not_active" | "expired" | "not_covered" | "recipient_not_allowed" | "over_cap" | "no_transfers_left" | "would_revert";

/** A spend the allowance does not cover; nothing was sent. `overLimit` says whether it may go to the person instead. */
export class AllowanceRefusal extends AppError {
  constructor(
    readonly reason: RefusalReason,
    message: string,
    readonly overLimit: OverLimit,
    readonly left?: { available: string; resetsAt: string; transfersLeft: number; token: Address | null; periodSeconds: number },
  ) {
    super("allowance_refused", message, 409);
  }
}

export type Payment = { to: Address; value: bigint; data?: Hex };

/** What a payment moves: the coin to a recipient, or a token's transfer(recipient, amount). */
function paymentOf(payment: Payment): { token: Address | null; recipient: Address; amount: bigint } | null {
  const data = payment.data ?? "0x";
  if (data === "0x") return { token: null, recipient: getAddress(payment.to), amount: payment.value };
  if (payment.value !== 0n) return null;
  try {
    const call = decodeFunctionData({ abi: erc20Abi, data });
    if (call.functionName !== "transfer") return null;
    const [recipient, amount] = call.args;
    return { token: getAddress(payment.to), recipient: getAddress(recipient), amount };
  } catch {
    return null;
  }
}

/**
 * The delegate's one-shot, exact redelegation of this execution to the relayer, who redeems it and pays the gas: it
 * allows that one call once, and only the relayer can redeem it.
 */
async function redelegation(
  framework: Framework,
  chainId: number,
  root: DelegationState,
  relayer: Address,
  execution: { target: Address; value: bigint; callData: Hex },
) {
  const delegate = await delegateAccount();
  const leaf: Delegation = {
    delegate: relayer,
    delegator: delegate.address,
    authority: root.hash,
    caveats: [
      { enforcer: framework.caveatEnforcers.ExactExecutionEnforcer, terms: createExactExecutionTerms({ execution }), args: "0x" },
      { enforcer: framework.caveatEnforcers.LimitedCallsEnforcer, terms: createLimitedCallsTerms({ limit: 1 }), args: "0x" },
    ],
    salt: randomSalt(),
    signature: "0x",
  };
  leaf.signature = await delegate.signTypedData(delegationTypedData(framework, chainId, leaf));
  return leaf;
}

/** The redeemDelegations call that performs `execution` through the chain leaf → person's delegation. */
export function redeemCall(chain: Delegation[], execution: { target: Address; value: bigint; callData: Hex }): Hex {
  const context = encodeDelegations(chain) as Hex;
  const executionCalldata = concat([execution.target, pad(toHex(execution.value), { size: 32 }), execution.callData]);
  return encodeFunctionData({
    abi: DelegationManager,
    functionName: "redeemDelegations",
    args: [[context], [SINGLE_DEFAULT_MODE], [executionCalldata]],
  });
}

/** A payment of this allowance that was sent and is not mined yet: the chain's "left" does not count it. */
class PendingSpendError extends AppError {
  constructor(hash: string) {
    super("allowance_busy", `A payment from this allowance (transaction ${hash}) is not confirmed yet; try again shortly.`, 409);
  }
}

/**
 * Settles spends that an earlier holder sent but did not see mined (its process stopped): what the enforcers say
 * is left counts only mined payments, so a spend waits until none is in flight.
 */
async function settleSent(allowanceId: string, chainId: number) {
  const sent = await db().allowanceSpend.findMany({ where: { allowanceId, status: "sent" } });
  for (const spend of sent) {
    const hash = spend.txHash as Hex;
    const receipt = await onChain(chainId, (client) => client.getTransactionReceipt({ hash }).catch(() => null));
    if (!receipt) {
      // Neither mined nor known to the node any more: it will never land, and nothing of it was spent.
      const known = await onChain(chainId, (client) => client.getTransaction({ hash }).catch(() => null));
      if (known) throw new PendingSpendError(hash);
      await db().allowanceSpend.update({ where: { id: spend.id }, data: { status: "failed" } });
      continue;
    }
    await db().allowanceSpend.update({ where: { id: spend.id }, data: { status: receipt.status === "success" ? "landed" : "failed" } });
  }
}

export type SpendResult = { spendId: string; txHash: Hex; delegationHash: Hex; amount: string; token: Address | null; recipient: Address };

/** Pays `payment` from allowance `allowanceId`, or throws an AllowanceRefusal before anything is sent. */
export async function spendFromAllowance(allowanceId: string, payment: Payment, context: { clientId?: string } = {}): Promise<SpendResult> {
  const first = await findAllowance(allowanceId);
  const refuse = (reason: RefusalReason, message: string, left?: AllowanceRefusal["left"]) =>
    new AllowanceRefusal(reason, message, first.overLimit as OverLimit, left);
  // Refused at once, before any wait: a revocation that is not yet confirmed stops spends here.
  if (first.status !== "active") throw refuse("not_active", "This allowance has been revoked.");
  if (first.expiresAt.getTime() <= Date.now()) throw refuse("expired", "This allowance has expired.");
  const moved = paymentOf(payment);
  if (!moved || moved.amount <= 0n)
    throw refuse("not_covered", "An allowance pays the chain's coin or a token's transfer(recipient, amount), nothing else.");
  const framework = frameworkFor(first.chainId);
  const relayer = relayerOn(first.chainId).address;

  return withLease(`allowance:${allowanceId}`, async () => {
    const allowance = await findAllowance(allowanceId);
    if (allowance.status !== "active") throw refuse("not_active", "This allowance has been revoked.");
    await settleSent(allowanceId, allowance.chainId);
    const candidates = allowance.delegations.filter((row) => (row.token ?? null) === moved.token);
    if (!candidates.length)
      throw refuse(
        "not_covered",
        moved.token ? `This allowance does not cover the token ${moved.token}.` : "This allowance does not cover the chain's coin.",
      );
    const states = await Promise.all(candidates.map((row) => delegationState(allowance.chainId, framework, row)));
    const state = states.find((candidate) => candidate.meaning.recipients.includes(moved.recipient));
    if (!state) throw refuse("recipient_not_allowed", `${moved.recipient} is not among this allowance's recipients.`);
    const left = {
      available: state.available.toString(),
      resetsAt: new Date(state.resetsAt * 1000).toISOString(),
      transfersLeft: state.callsLeft,
      token: moved.token,
      periodSeconds: state.meaning.periodSeconds,
    };
    if (state.callsLeft < 1) throw refuse("no_transfers_left", "This allowance has no transfers left.", left);
    if (moved.amount > state.available) {
      throw refuse(
        "over_cap",
        `This payment is above what is left of the allowance this period (${state.available} base units, until ${left.resetsAt}).`,
        left,
      );
    }

    const execution = { target: getAddress(payment.to), value: payment.value, callData: payment.data ?? "0x" };
    const leaf = await redelegation(framework, allowance.chainId, state, relayer, execution);
    const data = redeemCall([leaf, state.delegation], execution);
    const reverts = await simulate(allowance.chainId, { from: relayer, to: framework.DelegationManager, data });
    if (reverts) throw refuse("would_revert", `The chain would refuse this payment (${reverts}); nothing was sent.`, left);

    const spendId = randomId("sp_");
    const sent = await relay(allowance.chainId, { to: framework.DelegationManager, data }, async (hash) => {
      await db().allowanceSpend.create({
        data: {
          id: spendId,
          allowanceId,
          delegationHash: state.hash,
          recipient: moved.recipient,
          token: moved.token,
          amount: moved.amount.toString(),
          status: "sent",
          txHash: hash,
        },
      });
    });
    const receipt = await sent.receipt();
    const landed = receipt.status === "success";
    await db().allowanceSpend.update({ where: { id: spendId }, data: { status: landed ? "landed" : "failed" } });
    await recordAudit({
      type: "allowance.spent",
      userId: allowance.userId,
      clientId: context.clientId ?? null,
      credentialId: allowance.credentialId,
      data: {
        allowanceId,
        txHash: sent.hash,
        outcome: landed ? "landed" : "reverted",
        recipient: moved.recipient,
        amount: moved.token ? `${moved.amount} of token ${moved.token}` : `${formatUnits(moved.amount, 18)} of the chain's coin`,
      },
    });
    if (!landed) throw new AppError("chain_error", `The payment's transaction ${sent.hash} reverted.`, 502);
    return {
      spendId,
      txHash: sent.hash,
      delegationHash: state.hash,
      amount: moved.amount.toString(),
      token: moved.token,
      recipient: moved.recipient,
    };
  });
}
