// The allowance picker in the browser (components/grants/allowance-picker.tsx), by accessible names: consent, the
// API key form and "Give <wallet> an allowance for <client>" on /clients share it.
import assert from "node:assert/strict";
import type { Locator, Page } from "playwright-core";
import type { Address } from "viem";

export type AllowanceForm = {
  coin?: string;
  /** a token by its contract, or by its symbol where the picker offers it by name */
  token?: { address: Address; amount: string } | { symbol: string; amount: string };
  /** named payees (whole addresses); or any payee, each payment at most `anyPayee` of the token */
  recipient?: Address;
  anyPayee?: string;
  /** with anyPayee: the float of the agent's account */
  float?: string;
  transactions: number;
  over: "ask" | "refuse";
};

/** Fills in the allowance for "Main" within `scope` (a page, or the part of it that holds one picker), then asks for its review. */
export async function fillAllowanceFields(scope: Page | Locator, form: AllowanceForm) {
  if (form.anyPayee) await scope.getByRole("radio", { name: "Any payee, at most a set amount per payment" }).check();
  if (form.coin) await scope.getByLabel("ETH per period for Main").fill(form.coin);
  if (form.token) {
    await scope.getByRole("button", { name: "Add a token for Main" }).click();
    if ("symbol" in form.token) await scope.getByLabel("Token 1 for Main", { exact: true }).selectOption({ label: form.token.symbol });
    else await scope.getByLabel("Token 1 contract for Main").fill(form.token.address);
    await scope.getByLabel("Token 1 per period for Main").fill(form.token.amount);
    if (form.anyPayee) await scope.getByLabel("Token 1 at most per payment for Main").fill(form.anyPayee);
    if (form.float) await scope.getByLabel("Token 1 float in the agent's account (optional) for Main").fill(form.float);
  }
  if (form.recipient) await scope.getByLabel("Allowed recipients for Main").fill(form.recipient);
  assert.equal(await scope.getByLabel("Allowance period for Main").inputValue(), "day");
  assert.equal(await scope.getByLabel("Days until the allowance ends (at most 30) for Main").inputValue(), "7");
  await scope.getByLabel("Number of payments in all for Main").fill(String(form.transactions));
  await scope.getByLabel("Above the allowance for Main").selectOption(form.over);
  await scope.getByRole("button", { name: "Review allowance for Main" }).click();
}

/** The review's card: the summary in the person's words, the exact terms one tap away. */
export function reviewCard(scope: Page | Locator): Locator {
  return scope.getByRole("region", { name: "Allowance you sign for Main" });
}

/** The review's exact terms, as the page states them before the tap (opening them: they are one tap away). */
export async function reviewedWords(scope: Page | Locator): Promise<string[]> {
  const review = reviewCard(scope);
  await review.waitFor();
  const terms = review.locator("details");
  if ((await terms.getAttribute("open")) === null) await review.getByText("The exact terms you sign").click();
  return review.getByRole("listitem").allTextContents();
}
