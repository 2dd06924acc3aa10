// pay_x402 at a stock merchant (decision 0035): an `exact` offer by eip3009 within an allowance for any payee is paid
// from the allowance's agent account. First a funding: the payment's amount moved from the person to the agent
// account by a transfer within the allowance, sent and waited for as any such transfer is (payFromAllowance: the
// policy, the lease, the relayer, the ledger, the receipt), so that the chain still holds the cap per period, the
// number of payments and the expiry. Once it is mined, the agent account signs EIP-3009's TransferWithAuthorization
// of exactly that amount to the payee, and the merchant's facilitator settles it and pays its gas. The chain pins no
// payee here, as with any payee already: the server holds each payment to the allowance's most per payment. An offer
// by permit2 (a token without EIP-3009) is paid the same way, the account signing x402's Permit2 transfer instead
// (account-permit2.ts).
import { decodeFunctionData, encodeFunctionData, erc20Abi, getAddress, parseAbi, type Address, type Hex } from "viem";
import { recordAudit, type CallEvent } from "@/lib/audit";
import type { Clock } from "@/lib/clock";
import { randomId } from "@/lib/crypto";
import { db } from "@/lib/db";
import { AppError } from "@/lib/http/errors";
import { delegationState, findAllowance, frameworkFor, type Allowance } from "@/lib/allowances/allowances";
import { agentAccountOf } from "@/lib/allowances/agent-account";
import { UNSETTLED, unclaimed } from "@/lib/allowances/agent-account-balance";
import { answersEip3009 } from "@/lib/allowances/agent-account-permit2";
import { payFromAllowance, recordFromFloat } from "@/lib/allowances/agent";
import { withLease } from "@/lib/allowances/lease";
import { onChain } from "@/lib/wallet/chains";
import type { ServerAccount } from "@/lib/wallet/native-signer";
import type { AgentContext } from "@/lib/wallet/agent-context";
import type { Idempotency } from "@/lib/wallet/idempotency";
import { PolicyViolation } from "@/lib/wallet/policy";
import { policyRefusal } from "@/lib/wallet/requests";
import { payloadOf } from "@/lib/wallet/request-payload";
import { RequestError } from "@/lib/wallet/request-lifecycle";
import type { RequestRow } from "@/lib/wallet/request-lifecycle";
import { paymentAnswer, paymentTerms, type PaidX402 } from "./answer";
import { permit2NonceKey, readyForPermit2 } from "./account-permit2";
import { X402NotPayableError, type Payable } from "./choose";
import { judgeAuthorizable, toSign, type Authorizable } from "./one-tap";
import type { Offer, PaymentRequired } from "./requirement";

/**
 * An eip3009 or permit2 offer the agent account pays, with the any-payee delegation of the allowance that funds it and
 * the float the person chose for its token (decision 0038).
 */
export type AccountChoice = Authorizable & { allowanceId: string; delegationHash: string; float?: bigint };

/** Why `offer` cannot be paid from an agent account, or the choice it makes. */
export function judgeForAccount(offer: Offer, configured: readonly number[], payable: readonly Payable[]): AccountChoice | string {
  const terms = judgeAuthorizable(offer, configured);
  if (typeof terms === "string") return terms;
  const forToken = payable.filter((entry) => entry.chainId === terms.chainId && entry.token === terms.asset);
  if (!forToken.length) return `the token ${terms.asset} on chain ${terms.chainId}, which no allowance of this grant covers`;
  // Only an allowance for any payee: one naming its payees pins them on chain, which an authorization would not.
  const covering = forToken.find((entry) => entry.anyPayeeUpTo !== undefined);
  if (!covering)
    return (
      `chain ${terms.chainId} by ${terms.method}, which Agent Wallet pays within an allowance for any payee only ` +
      "(this one names its payees)"
    );
  if (terms.amount > covering.anyPayeeUpTo!)
    return (
      `a payment of ${terms.amount} base units of ${terms.asset}, above the most the allowance pays any payee at once ` +
      `(${covering.anyPayeeUpTo} base units)`
    );
  const { allowanceId, delegationHash, float } = covering;
  return { ...terms, allowanceId, delegationHash, ...(float !== undefined && { float }) };
}

const EIP3009 = parseAbi([
  "function name() view returns (string)",
  "function version() view returns (string)",
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
]);

/**
 * The token as the chain has it: EIP-3009 (it answers authorizationState) in the EIP-712 domain the offer names. A
 * wrong domain would make an authorization no facilitator can settle: refused before anything is funded.
 */
async function checkedToken(choice: Extract<AccountChoice, { method: "eip3009" }>): Promise<void> {
  const read = (functionName: "name" | "version") =>
    onChain(choice.chainId, (client) => client.readContract({ address: choice.asset, abi: EIP3009, functionName }));
  const [name, version, eip3009] = await Promise.all([
    read("name").catch(() => null),
    read("version").catch(() => null),
    answersEip3009(choice.chainId, choice.asset),
  ]);
  if (!eip3009)
    throw new X402NotPayableError(`The token ${choice.asset} has no EIP-3009 transfers on chain ${choice.chainId}. Nothing was paid.`);
  if (name !== choice.name || version !== choice.version)
    throw new X402NotPayableError(
      `The offer names the token's EIP-712 domain as "${choice.name}" version "${choice.version}", but the token on chain ` +
        `${choice.chainId} says "${name ?? "?"}" version "${version ?? "?"}". Nothing was paid.`,
    );
}

/** What of the account `choice`'s token its unsettled authorizations claim, asked of the chain as its method says. */
const claimsOf = (choice: AccountChoice) => ({
  allowanceId: choice.allowanceId,
  chainId: choice.chainId,
  token: choice.asset,
  permit2: choice.method === "permit2",
});

/** A payment that cannot be signed now, though its funding may land or has: nothing was signed. */
class AccountBusyError extends AppError {
  constructor(message: string) {
    super("allowance_busy", message, 409);
  }
}

type AccountPayer = {
  agent: AgentContext;
  credential: { id: string; name: string };
  clock: Clock;
  called?: CallEvent;
  /** stored with the funding's request, and the payment's answer with it once signed, for a retry (earlierPayment) */
  idempotency?: Idempotency;
  /**
   * A retry's: the first call's funding, mined, which that call gave up waiting for before it signed: signed now from
   * what it moved, never funded again.
   */
  funded?: RequestRow;
};

/** The transfer within the allowance of `amount` (the payment's, unless said) of `choice`'s token to `recipient`. */
function transferOf(choice: AccountChoice, recipient: Address, amount = choice.amount) {
  return {
    chainId: choice.chainId,
    to: choice.asset,
    value: "0",
    data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [recipient, amount] }),
  };
}

/**
 * The first call's funding as a retry finds it: refused unless it moved this payment to this account (with a float,
 * the payment and up to the float beside it: a first payment tops the account up).
 */
function fundedEarlier(row: RequestRow, choice: AccountChoice, account: Address) {
  const payload = payloadOf(row);
  const moved = payload.kind === "send_transaction" ? payload.transaction : null;
  const transfer =
    moved?.chainId === choice.chainId && moved.to.toLowerCase() === choice.asset.toLowerCase()
      ? (() => {
          try {
            return decodeFunctionData({ abi: erc20Abi, data: moved.data as Hex });
          } catch {
            return null;
          }
        })()
      : null;
  const [to, amount] = transfer?.functionName === "transfer" ? transfer.args : [];
  if (
    to?.toLowerCase() !== account.toLowerCase() ||
    amount === undefined ||
    amount < choice.amount ||
    amount > choice.amount + (choice.float ?? 0n)
  )
    throw new AccountBusyError("The first call with this idempotency key funded another payment: nothing was signed.");
  return { request_id: row.id, tx_hash: row.txHash, status: row.status };
}

const isLive = (allowance: Allowance, now: Date) => allowance.status === "active" && allowance.expiresAt > now;

/** The allowance as a payment from the account finds it under the account's lease: live, or nothing is signed. */
async function liveAllowance(choice: AccountChoice, now: Date) {
  // A revocation committed since: the account signs nothing more (what it holds goes back, revocation.ts).
  const allowance = await findAllowance(choice.allowanceId);
  if (!isLive(allowance, now)) throw new AppError("allowance_refused", "This allowance is no longer live. Nothing was signed.", 409);
  return allowance;
}

/**
 * With a float, the allowance's number of payments as the server counts it (decision 0038): the chain counts its
 * redemptions (fundings and top-ups, those in flight too), the payments signed from the float are the server's alone.
 * None left: refused, nothing signed.
 */
async function checkPaymentsLeft(allowance: Allowance, choice: AccountChoice): Promise<void> {
  const row = allowance.delegations.find((candidate) => candidate.hash === choice.delegationHash);
  if (!row) throw new AppError("allowance_refused", "This allowance no longer pays this token. Nothing was signed.", 409);
  const [chain, inFlight, fromFloat] = await Promise.all([
    delegationState(allowance.chainId, frameworkFor(allowance.chainId), row),
    db().allowanceSpend.count({ where: { allowanceId: allowance.id, delegationHash: row.hash, status: "sent" } }),
    db().x402Payment.count({ where: { allowanceId: allowance.id, fromFloat: true, status: { in: [UNSETTLED, "settled"] } } }),
  ]);
  if (chain.callsLeft - inFlight - fromFloat <= 0)
    throw new AppError(
      "allowance_refused",
      "This allowance has no payments left: each payment from the agent's account's float and each top-up of it counts as " +
        "one. Nothing was signed.",
      409,
    );
}

/** Accounts of this process with a top-up on its way: one at a time (across instances, its lease says so). */
const toppingUp = new Set<string>();

/**
 * Runs `fund` with what brings the account back to its float beside it, under the account's top-up lease, when no
 * other top-up of it is on its way; otherwise `fund(0n)`: at most one top-up in flight per account.
 */
async function withTopUp<T>(choice: AccountChoice, account: Address, now: Date, fund: (extra: bigint) => Promise<T>): Promise<T> {
  if (choice.float === undefined || toppingUp.has(account)) return fund(0n);
  toppingUp.add(account);
  try {
    return await withLease(
      `agent-account-top-up:${account}`,
      async () => {
        const free = await unclaimed(claimsOf(choice), account, now);
        return fund(free < choice.float! ? choice.float! - free : 0n);
      },
      { waitMs: 0 },
    ).catch((error: unknown) => {
      if ((error as Error).name === "LeaseTimeoutError") return fund(0n);
      throw error;
    });
  } finally {
    toppingUp.delete(account);
  }
}

/**
 * Pays `choice` from the allowance's agent account: from its float at once when it covers the payment (decision
 * 0038), otherwise funded within the allowance, then signed. `{ toPerson }` when the allowance sends the funding to the
 * person instead (the person chose `ask`, or it stopped): nothing was funded then.
 */
export async function payFromAgentAccount(
  payer: AccountPayer,
  required: PaymentRequired,
  choice: AccountChoice,
): Promise<PaidX402 | { toPerson: string }> {
  const { agent, credential, clock, called, idempotency, funded } = payer;
  const opening = agentAccountOf(choice.allowanceId);
  // a permit2 offer: Permit2 let take the token first (once), so that nothing is funded that the account cannot pay
  const [account] = await Promise.all([
    opening,
    choice.method === "permit2" ? readyForPermit2(choice, opening, agent.userId) : checkedToken(choice),
  ]);
  if (choice.float !== undefined && !funded) {
    const paid = await fromFloat(payer, required, choice, account);
    if (paid) return paid;
    // paused or stopped, the funding's own answer says so (to the person): counted only while it pays
    const allowance = await findAllowance(choice.allowanceId);
    if (isLive(allowance, clock())) await checkPaymentsLeft(allowance, choice);
  }
  // the spending policy judges the payment the funding is for: its allowed recipients are merchants, never the account
  const funding = funded
    ? fundedEarlier(funded, choice, account.address)
    : await withTopUp(choice, account.address, clock(), async (extra) => {
        const fund = (beside: bigint) =>
          payFromAllowance(agent, credential.id, transferOf(choice, account.address, choice.amount + beside), clock, {
            called,
            idempotency,
            judgedAs: transferOf(choice, choice.payee),
          });
        if (!extra) return fund(0n);
        // the float beside it above what the period has left: the payment alone, as without a float
        const alone = (refused: unknown) =>
          refused instanceof RequestError && refused.code === "allowance_refused" ? fund(0n) : Promise.reject(refused);
        return fund(extra).then((funding) => ("toPerson" in funding ? fund(0n) : funding), alone);
      }).catch(async (error: unknown) => {
        // the spending policy's refusal, in the person's units and audited, as any payment's
        if (error instanceof PolicyViolation) throw await policyRefusal(agent, credential, "x402", error, clock);
        throw error;
      });
  // the funding's own words for the person, without its sentence on who pays: pay_x402 adds its own
  if ("toPerson" in funding) return { toPerson: funding.toPerson.replace(/ It waits for your approval;.*$/, "") };
  if (funding.status !== "completed")
    throw new AccountBusyError(
      `This payment's funding (transaction ${funding.tx_hash}) is not mined yet, so nothing was signed. Once it is, a retry ` +
        "with this call's idempotency_key pays from what it moved; without a key what it moved stays in the agent's account " +
        "until the allowance stops, which sends it back to the person.",
    );
  return withLease(`agent-account:${account.address}`, async () => {
    // two retries of a funded payment at once: the one that signed first answers both
    if (funded) {
      const { toolAnswer } = await db().agentRequest.findUniqueOrThrow({ where: { id: funded.id }, select: { toolAnswer: true } });
      if (toolAnswer) return JSON.parse(toolAnswer) as PaidX402;
    }
    const now = clock();
    await liveAllowance(choice, now);
    const free = await unclaimed(claimsOf(choice), account.address, now);
    if (free < choice.amount)
      throw new AccountBusyError(`The agent's account holds ${free} base units free of its other payments: nothing was signed.`);
    const signed = await signFromAccount(payer, required, choice, account, now);
    await signed.record({ requestId: funding.request_id, fundedBy: funding.tx_hash });
    // a retry with the call's key is answered this payment (its funding's request holds the key)
    if (idempotency)
      await db().agentRequest.update({ where: { id: funding.request_id }, data: { toolAnswer: JSON.stringify(signed.paid) } });
    return signed.paid;
  });
}

/**
 * The payment signed from the account's float, under the account's lease, when what it holds free of its other
 * payments covers it and the allowance has a payment left (counted by the server): no funding, no block. Recorded as a
 * request within the spending policy (recordFromFloat), and a top-up back to the float started in the background once
 * answered. Null when the float does not cover it, or the allowance is not live: the payment goes the funded way.
 */
async function fromFloat(payer: AccountPayer, required: PaymentRequired, choice: AccountChoice, account: ServerAccount) {
  const { agent, credential, clock, called, idempotency } = payer;
  const paid = await withLease(`agent-account:${account.address}`, async () => {
    const now = clock();
    const allowance = await findAllowance(choice.allowanceId);
    if (!isLive(allowance, now)) return null;
    const [free] = await Promise.all([unclaimed(claimsOf(choice), account.address, now), checkPaymentsLeft(allowance, choice)]);
    if (free < choice.amount) return null;
    const signed = await signFromAccount(payer, required, choice, account, now);
    const requestId = await recordFromFloat(agent, credential.id, transferOf(choice, choice.payee), clock, {
      allowanceId: allowance.id,
      idempotency,
      answer: signed.paid,
    }).catch(async (error: unknown) => {
      if (error instanceof PolicyViolation) throw await policyRefusal(agent, credential, "x402", error, clock);
      throw error;
    });
    await signed.record({ requestId, fundedBy: null });
    if (called) await recordAudit(called(requestId), clock);
    return signed.paid;
  });
  if (paid) topUpInBackground(payer, choice, account.address);
  return paid;
}

/**
 * Brings the account back to its float after a payment from it, by a transfer within the allowance (the chain caps it
 * against the period), at most one on its way per account. The spending policy judged and held the payments it replaces
 * as they were signed, so it judges the top-up as moving nothing to their payee. Refused (the period spent, the policy)
 * it is no error: the float runs down and payments then wait for their own funding, or are refused.
 */
function topUpInBackground(payer: AccountPayer, choice: AccountChoice, account: Address): void {
  const { agent, credential, clock } = payer;
  void withTopUp(choice, account, clock(), async (extra) => {
    if (extra === 0n) return;
    await payFromAllowance(agent, credential.id, transferOf(choice, account, extra), clock, {
      judgedAs: transferOf(choice, choice.payee, 0n),
    });
  }).catch((error: unknown) => {
    if (!(error instanceof AppError))
      console.error(`Topping up allowance ${choice.allowanceId}'s agent account failed: ${(error as Error).name}`);
  });
}

/**
 * The account's signature of exactly the payment to the offer's payee, valid for the offer's time; `record` stores it
 * (an authorization the account's balance claims until settled or expired) and audits it.
 */
async function signFromAccount(
  { agent, credential, clock }: AccountPayer,
  required: PaymentRequired,
  choice: AccountChoice,
  account: ServerAccount,
  now: Date,
) {
  const validBefore = Math.floor(now.getTime() / 1000) + choice.offer.maxTimeoutSeconds;
  const { typedData, payload } = toSign(choice, account.address, validBefore);
  const signature = await account.signTypedData(typedData as never);
  const nonce = "authorization" in payload ? payload.authorization.nonce : permit2NonceKey(payload);
  const paymentId = randomId("xp_");
  const paid = {
    ...paymentAnswer(required, choice.offer, { ...payload, signature }),
    payment_id: paymentId,
    ...(await paymentTerms(required, choice, validBefore)),
    allowance_id: choice.allowanceId,
  } satisfies PaidX402;
  const record = async ({ requestId, fundedBy }: { requestId: string; fundedBy: string | null }) => {
    await db().x402Payment.create({
      data: {
        id: paymentId,
        allowanceId: choice.allowanceId,
        delegationHash: choice.delegationHash,
        leafHash: nonce,
        token: choice.asset,
        payee: choice.payee,
        amount: choice.amount.toString(),
        resource: required.resource.url,
        status: UNSETTLED,
        expiresAt: new Date(validBefore * 1000),
        createdAt: now,
        fromFloat: fundedBy === null,
      },
    });
    await recordAudit(
      {
        type: "allowance.spent",
        userId: agent.userId,
        clientId: agent.clientId,
        credentialId: credential.id,
        requestId,
        data: {
          allowanceId: choice.allowanceId,
          kind: "x402",
          paymentId,
          resource: required.resource.url,
          recipient: choice.payee,
          amount: `${choice.amount} of token ${choice.asset}`,
          from: getAddress(account.address),
          ...(fundedBy === null ? { fromFloat: true } : { fundedBy }),
          outcome: "signed",
        },
      },
      clock,
    );
  };
  return { paid, record };
}
