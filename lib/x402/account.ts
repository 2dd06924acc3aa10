// pay_x402 at a stock merchant (decision 0035): an `exact` offer by eip3009 within an allowance for any payee is paid
// from the allowance's agent account. First a funding: the payment's amount moved from the person to the agent
// account by a transfer within the allowance, sent and waited for as any such transfer is (payFromAllowance: the
// policy, the lease, the relayer, the ledger, the receipt), so that the chain still holds the cap per period, the
// number of payments and the expiry. Once it is mined, the agent account signs EIP-3009's TransferWithAuthorization
// of exactly that amount to the payee, and the merchant's facilitator settles it and pays its gas. The chain pins no
// payee here, as with any payee already: the server holds each payment to the allowance's most per payment. An offer
// by permit2 (a token without EIP-3009) is paid the same way, the account signing x402's Permit2 transfer instead
// (account-permit2.ts).
import { encodeFunctionData, erc20Abi, getAddress, parseAbi, type Address, type Hex } from "viem";
import { recordAudit, type CallEvent } from "@/lib/audit";
import type { Clock } from "@/lib/clock";
import { randomId } from "@/lib/crypto";
import { db } from "@/lib/db";
import { AppError } from "@/lib/http/errors";
import { findAllowance } from "@/lib/allowances/allowances";
import { agentAccountOf } from "@/lib/allowances/agent-account";
import { answersEip3009 } from "@/lib/allowances/agent-account-permit2";
import { payFromAllowance } from "@/lib/allowances/agent";
import { withLease } from "@/lib/allowances/lease";
import { onChain } from "@/lib/wallet/chains";
import type { AgentContext } from "@/lib/wallet/agent-context";
import type { Idempotency } from "@/lib/wallet/idempotency";
import { PolicyViolation } from "@/lib/wallet/policy";
import { policyRefusal } from "@/lib/wallet/requests";
import { payloadOf } from "@/lib/wallet/request-payload";
import type { RequestRow } from "@/lib/wallet/request-lifecycle";
import { paymentAnswer, paymentTerms, type PaidX402 } from "./answer";
import { permit2NonceKey, permit2NonceUsed, readyForPermit2 } from "./account-permit2";
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

/** A payment that cannot be signed now, though its funding may land or has: nothing was signed. */
class AccountBusyError extends AppError {
  constructor(message: string) {
    super("allowance_busy", message, 409);
  }
}

/** The agent account's authorizations not yet settled nor expired, as the database has them. */
const UNSETTLED = `authorized`;

/** An authorization's validBefore is read by the chain's clock, which may run behind ours: it counts this much longer. */
const EXPIRY_MARGIN_MS = 60_000;

/**
 * What the agent account holds that no unsettled authorization of it claims, each authorization asked of the chain
 * (used: settled; past its validBefore and unused: expired, its amount free again).
 */
async function unclaimed(choice: AccountChoice, account: Address, now: Date): Promise<bigint> {
  const { allowanceId, chainId, asset: token } = choice;
  const rows = await db().x402Payment.findMany({ where: { allowanceId, status: UNSETTLED, token } });
  const [balance, used] = await Promise.all([
    onChain(chainId, (client) => client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [account] })),
    Promise.all(
      rows.map((row) =>
        choice.method === "permit2"
          ? permit2NonceUsed(chainId, account, row.leafHash as Hex)
          : onChain(chainId, (client) =>
              client.readContract({
                address: token,
                abi: EIP3009,
                functionName: "authorizationState",
                args: [account, row.leafHash as Hex],
              }),
            ),
      ),
    ),
  ]);
  let claimed = 0n;
  const settled: string[] = [];
  const expired: string[] = [];
  for (const [index, row] of rows.entries()) {
    if (used[index]) settled.push(row.id);
    else if (row.expiresAt.getTime() + EXPIRY_MARGIN_MS < now.getTime()) expired.push(row.id);
    else claimed += BigInt(row.amount);
  }
  // one statement a status, on the payment's path
  const marked = (ids: string[], status: string) =>
    ids.length ? db().x402Payment.updateMany({ where: { id: { in: ids } }, data: { status } }) : null;
  await Promise.all([marked(settled, "settled"), marked(expired, "expired")]);
  return balance > claimed ? balance - claimed : 0n;
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

/** The transfer within the allowance of `choice`'s amount to `recipient`. */
function transferOf(choice: AccountChoice, recipient: Address) {
  return {
    chainId: choice.chainId,
    to: choice.asset,
    value: "0",
    data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [recipient, choice.amount] }),
  };
}

/** The first call's funding as a retry finds it: refused unless it moved exactly this payment to this account. */
function fundedEarlier(row: RequestRow, expected: ReturnType<typeof transferOf>) {
  const payload = payloadOf(row);
  const moved = payload.kind === "send_transaction" ? payload.transaction : null;
  if (
    moved?.chainId !== expected.chainId ||
    moved.to.toLowerCase() !== expected.to.toLowerCase() ||
    moved.data.toLowerCase() !== expected.data.toLowerCase()
  )
    throw new AccountBusyError("The first call with this idempotency key funded another payment: nothing was signed.");
  return { request_id: row.id, tx_hash: row.txHash, status: row.status };
}

/**
 * Pays `choice` from the allowance's agent account: funded within the allowance, then signed. `{ toPerson }` when the
 * allowance sends the funding to the person instead (the person chose `ask`, or it stopped): nothing was funded then.
 */
export async function payFromAgentAccount(
  { agent, credential, clock, called, idempotency, funded }: AccountPayer,
  required: PaymentRequired,
  choice: AccountChoice,
): Promise<PaidX402 | { toPerson: string }> {
  const opening = agentAccountOf(choice.allowanceId);
  // a permit2 offer: Permit2 let take the token first (once), so that nothing is funded that the account cannot pay
  const [account] = await Promise.all([
    opening,
    choice.method === "permit2" ? readyForPermit2(choice, opening, agent.userId) : checkedToken(choice),
  ]);
  // the spending policy judges the payment the funding is for: its allowed recipients are merchants, never the account
  const funding = funded
    ? fundedEarlier(funded, transferOf(choice, account.address))
    : await payFromAllowance(agent, credential.id, transferOf(choice, account.address), clock, {
        called,
        idempotency,
        judgedAs: transferOf(choice, choice.payee),
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
    // A revocation committed since the funding: the account signs nothing more (what it holds goes back, revocation.ts).
    const allowance = await findAllowance(choice.allowanceId);
    if (allowance.status !== "active" || allowance.expiresAt <= now)
      throw new AppError("allowance_refused", "This allowance is no longer live. Nothing was signed.", 409);
    const free = await unclaimed(choice, account.address, now);
    if (free < choice.amount)
      throw new AccountBusyError(`The agent's account holds ${free} base units free of its other payments: nothing was signed.`);
    const validBefore = Math.floor(now.getTime() / 1000) + choice.offer.maxTimeoutSeconds;
    const { typedData, payload } = toSign(choice, account.address, validBefore);
    const signature = await account.signTypedData(typedData as never);
    const nonce = "authorization" in payload ? payload.authorization.nonce : permit2NonceKey(payload);
    const paymentId = randomId("xp_");
    await db().x402Payment.create({
      data: {
        id: paymentId,
        allowanceId: allowance.id,
        delegationHash: choice.delegationHash,
        leafHash: nonce,
        token: choice.asset,
        payee: choice.payee,
        amount: choice.amount.toString(),
        resource: required.resource.url,
        status: UNSETTLED,
        expiresAt: new Date(validBefore * 1000),
        createdAt: now,
      },
    });
    await recordAudit(
      {
        type: "allowance.spent",
        userId: agent.userId,
        clientId: agent.clientId,
        credentialId: credential.id,
        requestId: funding.request_id,
        data: {
          allowanceId: allowance.id,
          kind: "x402",
          paymentId,
          resource: required.resource.url,
          recipient: choice.payee,
          amount: `${choice.amount} of token ${choice.asset}`,
          from: getAddress(account.address),
          fundedBy: funding.tx_hash,
          outcome: "signed",
        },
      },
      clock,
    );
    const paid = {
      ...paymentAnswer(required, choice.offer, { ...payload, signature }),
      payment_id: paymentId,
      ...(await paymentTerms(required, choice, validBefore)),
      allowance_id: allowance.id,
    } satisfies PaidX402;
    // a retry with the call's key is answered this payment (its funding's request holds the key)
    if (idempotency) await db().agentRequest.update({ where: { id: funding.request_id }, data: { toolAnswer: JSON.stringify(paid) } });
    return paid;
  });
}
