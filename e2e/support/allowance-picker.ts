// The allowance picker in the browser (components/grants/allowance-picker.tsx), by accessible names: consent, the
// API key form and "Give <wallet> an allowance for <client>" on /clients share it.
import assert from "node:assert/strict";
import type { Locator, Page } from "playwright-core";
import type { Address } from "viem";

export type AllowanceForm = {
  coin?: string;
  token?: { address: Address; amount: string };
  recipient: Address;
  transactions: number;
  over: "ask" | "refuse";
};

/** Fills in the allowance for "Main" within `scope` (a page, or the part of it that holds one picker), then asks for its review. */
export async function fillAllowanceFields(scope: Page | Locator, form: AllowanceForm) {
  if (form.coin) await scope.getByLabel("ETH per period for Main").fill(form.coin);
  if (form.token) {
    await scope.getByRole("button", { name: "Add a token for Main" }).click();
    await scope.getByLabel("Token 1 contract for Main").fill(form.token.address);
    await scope.getByLabel("Token 1 per period for Main").fill(form.token.amount);
  }
  await scope.getByLabel("Allowed recipients for Main").fill(form.recipient);
  assert.equal(await scope.getByLabel("Allowance period for Main").inputValue(), "day");
  assert.equal(await scope.getByLabel("Days until the allowance ends (at most 30) for Main").inputValue(), "7");
  await scope.getByLabel("Number of payments in all for Main").fill(String(form.transactions));
  await scope.getByLabel("Above the allowance for Main").selectOption(form.over);
  await scope.getByRole("button", { name: "Review allowance for Main" }).click();
}

/** The review's words, as the page states them before the tap. */
export async function reviewedWords(scope: Page | Locator): Promise<string[]> {
  const review = scope.getByRole("region", { name: "Allowance you sign for Main" });
  await review.waitFor();
  return review.getByRole("listitem").allTextContents();
}
