// The allowance at consent as a person sees it (issue 44 items 5 and 9, issue 43 item 3), in Chromium on a hardhat
// chain with the Delegation Framework and Circle's USDC listed for the chain: one card in the person's words — the
// payee named from the address book, "for 7 days", the number of payments counted in all, where to stop it — above the
// Approve button, the exact signed terms one tap away; the token picked by its name, its amounts in its own units; an
// allowance for any payee says plainly what a compromised server could still do, at consent and on /clients. At 375 px
// and 1280 px nothing makes the page scroll sideways; each screen is written to test-results/screenshots.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { erc20Abi, getAddress, parseAbi, type Address } from "viem";
import type { Browser, Page } from "playwright-core";
import type { RunningApp } from "../support/app";
import { startAllowanceApp, type AllowanceApp } from "../support/allowances";
import { agentAsks, newPerson, redirected } from "../support/consent";
import { deployErc20, deployer, mined } from "../support/contracts";
import { deployFiatToken } from "@/test-chain/fiat-token";
import { fillAllowanceFields, reviewCard, reviewedWords } from "../support/allowance-picker";
import { overflow, screenshot, widestElement } from "../support/screens";
import { requirementHeader } from "../support/x402";
import { db } from "@/lib/db";

const ALICE = getAddress("0x00000000000000000000000000000000000a11ce");
const mintAbi = parseAbi(["function mint(address to, uint256 amount) returns (bool)"]);

describe("the allowance at consent, as a person sees it", { timeout: 600_000 }, () => {
  let world: AllowanceApp & { browser: Browser };
  let app: RunningApp;
  let browser: Browser;
  let usdc: Address;

  before(async () => {
    world = await startAllowanceApp({
      browser: true,
      tokens: async (chain) => {
        usdc = (await deployFiatToken(chain)).address;
        return [usdc];
      },
    });
    ({ app, browser } = world);
  });
  after(() => world?.stop());

  /** A person whose wallet "Main" holds 1 ETH and 5 USDC, with Alice in their address book, on consent for an agent. */
  async function personAtConsent(email: string, mode: "approve" | "allowance") {
    const person = await newPerson(browser, app, email, ["Main"]);
    const main = await db().credential.findFirstOrThrow({ where: { name: "Main", user: { email } } });
    await world.chain.fund(getAddress(main.address), "1");
    const minter = await deployer(world.chain);
    await mined(
      world.chain,
      await minter.writeContract({ address: usdc, abi: mintAbi, functionName: "mint", args: [getAddress(main.address), 5_000_000n] }),
    );
    const { saveContact } = await import("@/lib/wallet/address-book");
    await saveContact(main.userId, { address: ALICE, label: "Alice" });
    const asked = await agentAsks(app, person.page, "Paying Agent");
    const page = person.page;
    await page.getByRole("checkbox", { name: "Main", exact: true }).check();
    await page.getByLabel("Approval mode for Main").selectOption(mode);
    return { page, ...asked, credentialId: main.id };
  }

  /** Nothing wider than the phone, and every placeholder of the limits and allowance forms shown whole. */
  async function fitsAt(page: Page, width: number, file: string) {
    await page.setViewportSize({ width, height: 900 });
    await screenshot(page, `${file}-${width}`);
    assert.equal(await overflow(page), 0, `at ${width} px the page scrolls sideways: ${await widestElement(page)}`);
    const cut = await page.evaluate(() => {
      const canvas = document.createElement("canvas").getContext("2d")!;
      const fields = document.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>(
        ".limits input[placeholder], .limits textarea[placeholder]",
      );
      return [...fields].flatMap((field) => {
        const style = getComputedStyle(field);
        canvas.font = `${style.fontSize} ${style.fontFamily}`;
        const line = field.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        // a text area wraps its placeholder over its rows (with a word's slack per row)
        const room = field instanceof HTMLTextAreaElement ? field.rows * (line - canvas.measureText("placeholder").width) : line;
        return canvas.measureText(field.placeholder).width > room + 1 ? [field.placeholder] : [];
      });
    });
    assert.deepEqual(cut, [], `placeholders cut at ${width} px`);
  }

  /**
   * On a phone (390×844), reviewing the allowance brings its card to the screen with the Approve button: both are on it
   * whole, with no scrolling of the person's own.
   */
  async function cardAndApproveOnAPhone(page: Page) {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.getByRole("button", { name: "Review allowance for Main" }).click();
    const card = reviewCard(page);
    await card.waitFor();
    // brought to the screen by the page itself once this review is back: the page, at its top before, has scrolled (the
    // card of the review before may already be in view while the review is on its way)
    await page
      .waitForFunction(() => {
        const shown = document.querySelector(".allowance-card")?.getBoundingClientRect();
        return window.scrollY > 0 && shown !== undefined && shown.top >= 0 && shown.bottom <= window.innerHeight;
      })
      .catch(() => {});
    await page.screenshot({ path: "test-results/screenshots/consent-allowance-card-and-approve-390.png" });
    const onScreen = async (name: string, box: { x: number; y: number; width: number; height: number } | null) => {
      assert.ok(box, `${name} is shown`);
      assert.ok(box.y >= 0 && box.y + box.height <= 844, `${name} spans ${Math.round(box.y)}–${Math.round(box.y + box.height)} px of 844`);
    };
    await onScreen("the card", await card.boundingBox());
    await onScreen("Approve with passkey", await page.getByRole("button", { name: "Approve with passkey" }).boundingBox());
  }

  it("one card in the person's words above Approve, the exact terms one tap away, whole on a phone", async () => {
    const { page, callback } = await personAtConsent("card@example.com", "allowance");
    await page.getByRole("button", { name: "Let Main pay Alice" }).click();
    await fillAllowanceFields(page, { coin: "0.05", transactions: 5, over: "ask" });
    const card = reviewCard(page);
    await card.waitFor();
    assert.equal(
      (await card.locator(".allowance-summary").textContent())?.trim(),
      "0.05 ETH a day to Alice, for 7 days, at most 5 payments in all. Stop it any time on Clients.",
    );
    // the exact terms are there, closed: one tap away
    assert.equal(await card.getByRole("listitem").count(), 0);
    const approve = page.getByRole("button", { name: "Approve with passkey" });
    const [cardBox, approveBox] = [await card.boundingBox(), await approve.boundingBox()];
    assert.ok(cardBox && approveBox && cardBox.y + cardBox.height <= approveBox.y, "the card stands above the Approve button");
    await cardAndApproveOnAPhone(page);
    await fitsAt(page, 375, "consent-allowance-card");
    const words = await reviewedWords(page);
    assert.match(words[0], new RegExp(`^Up to 0\\.05 ETH per day, the day starting at \\d\\d:\\d\\d UTC, to ${ALICE};`));
    await fitsAt(page, 375, "consent-allowance-terms");
    await fitsAt(page, 1280, "consent-allowance-terms");
    await page.getByRole("button", { name: "Deny" }).click();
    await redirected(page, callback);
    await callback.close();
  });

  it("any payee, with USDC picked by name: the card and /clients say what a compromised server could still pay", async () => {
    const { page, callback } = await personAtConsent("anyone@example.com", "allowance");
    assert.equal(await page.getByRole("radio", { name: "Only these payees" }).isChecked(), true, "a payee list is the default");
    await fillAllowanceFields(page, { token: { symbol: "USDC", amount: "0.05" }, anyPayee: "0.015", transactions: 20, over: "refuse" });
    assert.equal(await page.getByLabel("Token 1 contract for Main").count(), 0, "a token the wallet holds is not pasted as a contract");
    const card = reviewCard(page);
    await card.waitFor();
    assert.equal(
      (await card.locator(".allowance-summary").textContent())?.trim(),
      "0.05 USDC a day to any payee, at most 0.015 USDC per payment, for 7 days, at most 20 payments in all. Stop it any time on " +
        "Clients.",
    );
    // the warning is a note of its own on the card, not the sentence's tail
    const warning =
      "Any payee: If Agent Wallet's server were compromised, anyone could be paid, up to 0.05 USDC a day and no more. " +
      "Paid APIs (x402) are paid from an account of the agent's own, filled from this allowance one payment at a time: only " +
      "the server checks whom it pays, and a compromised server could also take what it holds for payments on their way.";
    assert.equal((await card.getByRole("note", { name: "Any payee warning" }).textContent())?.trim(), warning);
    await cardAndApproveOnAPhone(page);
    await fitsAt(page, 375, "consent-allowance-any-payee");
    const words = (await reviewedWords(page)).join("\n");
    assert.match(words, /to any payee, at most 0\.015 USDC per payment;/);
    assert.match(words, new RegExp(`Token contract: ${usdc}\\.`));
    await fitsAt(page, 1280, "consent-allowance-any-payee");

    await page.setViewportSize({ width: 375, height: 900 });
    await page.getByRole("button", { name: "Approve with passkey" }).click();
    await redirected(page, callback);
    await callback.close();
    const allowance = await db().allowance.findFirstOrThrow({
      where: { delegations: { some: { token: usdc } } },
      include: { delegations: true },
    });
    assert.deepEqual(
      allowance.delegations.map((row) => row.perPaymentMax),
      ["15000"],
      "the most per payment the person chose is kept for the server",
    );

    await page.goto(`${app.appUrl}/clients`);
    const shown = page.getByRole("region", { name: "Allowance of Main on Local dev chain" });
    await shown.getByText("The exact terms you signed").click();
    await shown
      .getByText(
        "Any payee: Agent Wallet refuses a payment above 0.015 USDC, but if Agent Wallet's server were compromised, anyone could be " +
          "paid, up to 0.05 USDC a day and no more.",
        { exact: false },
      )
      .waitFor();
    assert.equal((await shown.getByRole("note", { name: "Any payee warning" }).textContent())?.trim(), warning);
    await fitsAt(page, 375, "clients-allowance-any-payee");
    await fitsAt(page, 1280, "clients-allowance-any-payee");
  });

  it("a float for any payee: the card states it and the warning names it; what is stored is what was approved", async () => {
    const { page, callback } = await personAtConsent("float@example.com", "allowance");
    await fillAllowanceFields(page, {
      token: { symbol: "USDC", amount: "0.05" },
      anyPayee: "0.015",
      float: "0.03",
      transactions: 20,
      over: "refuse",
    });
    const card = reviewCard(page);
    await card.waitFor();
    const warning = (await card.getByRole("note", { name: "Any payee warning" }).textContent())?.trim() ?? "";
    assert.match(warning, / A compromised server could take the float, up to 0\.03 USDC, and what is left of the cap\.$/);
    const words = (await reviewedWords(page)).join("\n");
    assert.match(words, /Agent Wallet keeps up to 0\.03 USDC of this allowance in the agent's account/);
    await fitsAt(page, 375, "consent-allowance-float");
    await page.getByRole("button", { name: "Approve with passkey" }).click();
    await redirected(page, callback);
    await callback.close();
    const allowance = await db().allowance.findFirstOrThrow({
      where: { delegations: { some: { token: usdc, float: { not: null } } } },
      include: { delegations: true },
    });
    assert.deepEqual(
      allowance.delegations.map((row) => [row.perPaymentMax, row.float]),
      [["15000", "30000"]],
      "the float the person chose is kept, bound to their tap",
    );

    // the agent's first payment funds itself and the float; /clients counts the float in what is left, and takes it back
    const { payX402 } = await import("@/lib/x402/pay");
    const grant = await db().grant.findFirstOrThrow({ where: { id: allowance.grantId! }, include: { client: true, user: true } });
    const main = await db().credential.findUniqueOrThrow({ where: { id: allowance.credentialId } });
    const agent = {
      userId: grant.userId,
      userEmail: grant.user.email,
      clientId: grant.clientId,
      clientName: grant.client.name,
      grantId: grant.id,
      via: "access_token" as const,
      credentials: [{ credentialId: main.id, mode: "allowance" as const, name: main.name, kind: "evm" as const, address: main.address }],
    };
    const offer = { chainId: world.chain.chainId, asset: usdc, amount: "10000", payTo: ALICE, extra: { name: "USD Coin", version: "2" } };
    assert.ok((await payX402(agent, main.id, requirementHeader(offer))).header, "paid from the agent's account");
    await page.goto(`${app.appUrl}/clients`);
    const shown = page.getByRole("region", { name: "Allowance of Main on Local dev chain" });
    await shown.getByText(/0\.04 USDC left until it resets .*, of which 0\.03 USDC already in the agent's account\./).waitFor();
    await shown.getByRole("button", { name: "Return what the agent's account holds" }).click();
    await page.getByText("Sent back to your wallet. The allowance goes on").waitFor();
    const account = await db().agentAccount.findUniqueOrThrow({ where: { allowanceId: allowance.id } });
    const balanceOf = (owner: string) =>
      world.chain.client.readContract({ address: usdc, abi: erc20Abi, functionName: "balanceOf", args: [getAddress(owner)] });
    assert.equal(await balanceOf(account.address), 10_000n, "the float went back; the payment on its way stays");
    assert.equal(await balanceOf(main.address), 5_000_000n - 10_000n);
  });

  it("a token cap is picked by the token's name and typed in its units; every field shows its placeholder whole", async () => {
    const { page, callback, credentialId } = await personAtConsent("caps@example.com", "approve");
    await page.getByLabel("Spending limits for Main").selectOption("custom");
    await page.getByText("More rules for Main").click();
    await page.getByRole("button", { name: "Add a token cap for Main" }).click();
    const picked = page.getByLabel("Token cap 1 for Main", { exact: true });
    assert.equal(await picked.locator("option:checked").textContent(), "USDC");
    await page.getByLabel("Token cap 1 per transaction for Main").fill("0.5");
    await page.getByLabel("Token cap 1 per day for Main").fill("2");
    await fitsAt(page, 375, "consent-token-caps");
    await fitsAt(page, 1280, "consent-token-caps");
    await page.getByRole("button", { name: "Approve with passkey" }).click();
    await redirected(page, callback);
    await callback.close();
    const granted = await db().grantCredential.findFirstOrThrow({ where: { credentialId } });
    assert.deepEqual(JSON.parse(granted.policy!).tokens, [
      { chain_id: world.chain.chainId, token: usdc.toLowerCase(), per_transaction: "500000", per_day: "2000000" },
    ]);
  });

  it("on /clients, caps are typed in the tokens' units: a listed token by name, another by contract with its symbol", async () => {
    const { page, callback, credentialId } = await personAtConsent("edit-caps@example.com", "approve");
    await page.getByRole("button", { name: "Approve with passkey" }).click();
    await redirected(page, callback);
    await callback.close();
    const tst = await deployErc20(world.chain, { name: "Test Token", symbol: "TST", supply: 10n ** 18n, holder: ALICE });
    const chainId = world.chain.chainId;
    const storedPolicy = async () => (await db().grantCredential.findFirstOrThrow({ where: { credentialId } })).policy;
    const approved = await storedPolicy();

    await page.goto(`${app.appUrl}/clients`);
    const row = page.getByRole("listitem", { name: "Paying Agent" });
    await row.getByRole("button", { name: "Edit limits for Main" }).click();
    await row.getByLabel("Spending limits for Main").selectOption("custom");
    await row.getByText("More rules for Main").click();
    await row.getByRole("button", { name: "Add a token cap for Main" }).click();
    await row.getByLabel("Token cap 1 for Main", { exact: true }).selectOption({ label: "USDC" });
    await row.getByLabel("Token cap 1 per transaction for Main").fill("2.5");
    const others = row.getByLabel("Other token caps for Main");

    // a contract that does not answer as an ERC-20 has no units: said under the field, and nothing is saved
    const manager = world.environment.DelegationManager;
    await others.fill(`${chainId} ${manager} 1 -`);
    await row.getByRole("alert").filter({ hasText: "does not answer as an ERC-20 token" }).waitFor();
    await screenshot(page, "clients-token-cap-not-a-token");
    await row.getByRole("button", { name: "Save limits for Main" }).click();
    await page
      .getByRole("alert")
      .filter({ hasText: `${manager} on chain ${chainId} is not an ERC-20 token` })
      .waitFor();
    assert.equal(await storedPolicy(), approved);

    await others.fill(`${chainId} ${tst} 0.75 -`);
    await row.getByText("caps in TST").waitFor();
    await fitsAt(page, 375, "clients-token-caps");
    await fitsAt(page, 1280, "clients-token-caps");
    await row.getByRole("button", { name: "Save limits for Main" }).click();
    await page.getByRole("status").filter({ hasText: "Limits for Main saved" }).waitFor();
    assert.deepEqual(JSON.parse(await storedPolicy()).tokens, [
      { chain_id: chainId, token: usdc.toLowerCase(), per_transaction: "2500000" },
      { chain_id: chainId, token: tst.toLowerCase(), per_transaction: "750000000000000000" },
    ]);
  });
});
