// What every stock merchant's payment from the agent's account must do, by eip3009 (agent-account-suite.ts) or by
// permit2 (agent-account-permit2-suite.ts): the same cases, each suite's agent, merchants and token.
import assert from "node:assert/strict";
import { getAddress, type Address, type Hex, type PublicClient } from "viem";
import { decodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import type { PrivateKeyAccount } from "viem/accounts";
import type { FacilitatorClient } from "@x402/core/server";
import type { AgentContext } from "@/lib/wallet/agent-context";
import { startPaidResourceAsking, type PaidResource } from "./x402-resource";

/**
 * A stock merchant selling a report for `amount` of `token` to `payTo` by eip3009, settled by `facilitator`: its URL and
 * its PAYMENT-REQUIRED. The resource joins `resources`, which the suite closes after.
 */
export async function eip3009Sale(
  market: { facilitator: FacilitatorClient; chainId: number; token: Address; resources: PaidResource[] },
  payTo: Address,
  amount: bigint,
): Promise<Sale> {
  const { facilitator, chainId, token, resources } = market;
  const sale = { facilitator, transfer: "eip3009" as const, chainId, token, payTo, amount };
  const { resource, required } = await startPaidResourceAsking({ ...sale, description: "A report" });
  resources.push(resource);
  return { url: resource.url, required };
}

/** An agent paying from its allowance's account, and the person whose allowance it is. */
type Paying = { agent: AgentContext; credentialId: string; allowanceId: string; person: Address };
/** A merchant's resource and its PAYMENT-REQUIRED. */
type Sale = { url: string; required: string };

/** A retry with the call's idempotency key answers the same payment, funded once: the answer, once presented, is paid. */
export async function assertRetryAnswersTheSamePayment({ agent, credentialId, allowanceId }: Paying, sale: Sale) {
  const { earlierPayment, payX402 } = await import("@/lib/x402/pay");
  const { idempotencyOf, once } = await import("@/lib/wallet/idempotency");
  const { systemClock } = await import("@/lib/clock");
  const { db } = await import("@/lib/db");
  const { required } = sale;
  const idempotency = idempotencyOf("pay_x402", { credential_id: credentialId, payment_required: required, idempotency_key: "k1" });
  const call = () =>
    once(
      agent,
      idempotency,
      () => payX402(agent, credentialId, required, systemClock, { idempotency }),
      (row) => earlierPayment(agent, row, (funded) => payX402(agent, credentialId, required, systemClock, { idempotency, funded })),
    );
  const first = await call();
  const again = await call();
  assert.ok(first.header);
  assert.equal(again.value, first.value);
  assert.equal(again.payment_id, first.payment_id);
  assert.equal(await db().allowanceSpend.count({ where: { allowanceId } }), 1, "funded once");
  assert.equal((await fetch(sale.url, { headers: { [again.header!]: again.value! } })).status, 200);
}

/**
 * The payments of `sales` at once from an allowance whose cap pays `paying` of them: exactly those are paid (each
 * settled by its merchant), the others refused; the chain moved exactly the cap from the person, the agent's account
 * holds nothing, and the server counts the cap spent. `balanceOf`: the token's balance; `pay`: how they are all paid
 * (on the chain's blocks as the caller mines them).
 */
export async function assertConcurrentPaymentsWithinTheCap(
  { agent, credentialId, allowanceId, person }: Paying,
  sales: Sale[],
  expect: { paying: number; cap: bigint; balanceOf: (address: Address) => Promise<bigint> },
  pay: <T>(work: () => Promise<T>) => Promise<T> = (work) => work(),
) {
  const { payX402 } = await import("@/lib/x402/pay");
  const { allowanceForAgent } = await import("@/lib/allowances/agent");
  const { db } = await import("@/lib/db");
  const before = await expect.balanceOf(person);
  const outcomes = await pay(() => Promise.allSettled(sales.map((sale) => payX402(agent, credentialId, sale.required))));
  const paid = outcomes.flatMap((outcome, index) => (outcome.status === "fulfilled" ? [{ paid: outcome.value, sale: sales[index] }] : []));
  const refused = outcomes.flatMap((outcome) => (outcome.status === "rejected" ? [outcome.reason as Error & { code?: string }] : []));
  assert.equal(paid.length, expect.paying, refused.map((error) => error.message).join("\n"));
  for (const error of refused) assert.equal(error.code, "allowance_refused", error.message);
  for (const { paid: one, sale } of paid) {
    const response = await fetch(sale.url, { headers: { [one.header!]: one.value! } });
    assert.equal(response.status, 200);
  }
  assert.equal(await expect.balanceOf(person), before - expect.cap, "the chain moved exactly the cap");
  const account = (await db().agentAccount.findUniqueOrThrow({ where: { allowanceId } })).address as Address;
  assert.equal(await expect.balanceOf(account), 0n);
  const [allowance] = (await allowanceForAgent(agent, credentialId)).allowances;
  assert.equal(allowance.limits[0].left, "0", "the server counts the cap spent too");
}

/**
 * A payment signed and never presented to its merchant (what it moved stays in the agent's account), then the allowance
 * revoked with the person's key (`mine`: on the chain's blocks as the caller mines them): revoked, the account holds
 * nothing, the person holds again what they held. Answers the unused payment and the account.
 */
export async function revokedAfterAnUnusedPayment(
  paying: Paying & { personKey: PrivateKeyAccount },
  sale: Sale,
  expect: { price: bigint; balanceOf: (address: Address) => Promise<bigint> },
  mine: <T>(work: () => Promise<T>) => Promise<T> = (work) => work(),
) {
  const { payX402 } = await import("@/lib/x402/pay");
  const { db } = await import("@/lib/db");
  const { prepareRevocation, revokeAllowances } = await import("@/lib/allowances/revocation");
  const { signRevocation } = await import("@/lib/allowances/revocation-operation");
  const { agent, credentialId, allowanceId, person, personKey } = paying;
  const before = await expect.balanceOf(person);
  const unused = await payX402(agent, credentialId, sale.required);
  assert.ok(unused.header);
  const account = (await db().agentAccount.findUniqueOrThrow({ where: { allowanceId } })).address as Address;
  assert.equal(await expect.balanceOf(account), expect.price);

  const { userId } = await db().allowance.findUniqueOrThrow({ where: { id: allowanceId } });
  await mine(async () => {
    const prepared = await prepareRevocation(userId, [allowanceId]);
    await revokeAllowances(userId, [allowanceId], { nonce: prepared.nonce, signature: await signRevocation(personKey, prepared) });
  });
  assert.equal((await db().allowance.findUniqueOrThrow({ where: { id: allowanceId } })).status, "revoked");
  assert.equal(await expect.balanceOf(account), 0n, "the agent's account holds nothing after the revocation");
  assert.equal(await expect.balanceOf(person), before, "what it held went back to the person");
  return { unused, account };
}

/**
 * The payment of `sale` to `payee` paid with no tap from the allowance's account, funded with exactly `price`: its
 * answer, the account, and the payload it carries (decoded, for the caller's scheme to check).
 */
export async function paidFromTheAccount(
  { agent, credentialId, allowanceId }: Paying,
  sale: Sale,
  expect: { payee: Address; price: bigint; balanceOf: (address: Address) => Promise<bigint> },
) {
  const { payX402 } = await import("@/lib/x402/pay");
  const { db } = await import("@/lib/db");
  const paid = await payX402(agent, credentialId, sale.required);
  assert.equal(paid.header, "PAYMENT-SIGNATURE");
  assert.equal(paid.payee, expect.payee);
  assert.equal(paid.paid.amount, String(expect.price));
  assert.equal(paid.allowance_id, allowanceId);
  const account = getAddress((await db().agentAccount.findUniqueOrThrow({ where: { allowanceId } })).address);
  assert.equal(await expect.balanceOf(account), expect.price, "funded with exactly the payment, within the allowance");
  const payload = (JSON.parse(Buffer.from(paid.value!, "base64").toString("utf8")) as PaymentPayload).payload;
  return { paid, account, payload };
}

/**
 * `paid` presented to its merchant: 200 and the content, `price` moved from the person (who held `before`) to the
 * payee, the account left with nothing. Answers the gas of the payment's funding and of the facilitator's settlement.
 */
export async function settledByTheMerchant(
  { allowanceId, person }: Paying,
  sale: Sale,
  paid: { header: string | null; value: string | null },
  expect: { payee: Address; account: Address; price: bigint; before: bigint; balanceOf: (address: Address) => Promise<bigint> },
  chain: PublicClient,
) {
  const { db } = await import("@/lib/db");
  const response = await fetch(sale.url, { headers: { [paid.header!]: paid.value! } });
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), { report: "paid content" });
  assert.equal(await expect.balanceOf(expect.payee), expect.price);
  assert.equal(await expect.balanceOf(expect.account), 0n);
  assert.equal(await expect.balanceOf(person), expect.before - expect.price);
  const settled = decodePaymentResponseHeader(response.headers.get("payment-response")!);
  const settlement = await chain.getTransactionReceipt({ hash: settled.transaction as Hex });
  const [spend] = await db().allowanceSpend.findMany({ where: { allowanceId } });
  assert.equal(spend.recipient, expect.account, "the funding's recipient is the agent's account");
  const funding = await chain.getTransactionReceipt({ hash: spend.txHash as Hex });
  return { funding: funding.gasUsed, settlement: settlement.gasUsed };
}
