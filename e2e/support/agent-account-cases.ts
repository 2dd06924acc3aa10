// What every stock merchant's payment from the agent's account must do, by eip3009 (agent-account-suite.ts) or by
// permit2 (agent-account-permit2-suite.ts): the same cases, each suite's agent, merchants and token.
import assert from "node:assert/strict";
import type { Address } from "viem";
import type { AgentContext } from "@/lib/wallet/agent-context";

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
      (row) => earlierPayment(agent, row),
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
