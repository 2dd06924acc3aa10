// An allowance on /clients as a person reads it (issue 42 item 6, issue 44 items 5 and 6), in Chromium with a virtual
// passkey against the started app on a hardhat chain with the Delegation Framework: the consent card's one line with
// the days left, the exact signed terms one tap away; what is left until the period resets, and apart from it the
// payments left in all, which never come back; each payment stacked whole on a phone; a second allowance for the same
// wallet says both are live on chain and what that adds up to; a revoked one stays readable with its payments. At
// consent, the chosen approval mode reads whole on a phone. At 375 px and 1280 px nothing makes the page scroll
// sideways; each screen is written to test-results/screenshots.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Browser, Locator, Page } from "playwright-core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RunningApp } from "../support/app";
import { agentAsks, connectAgent, newPerson, type Person } from "../support/consent";
import { grantAllowanceFor, personWithShoppingWallet, startAllowanceApp, type AllowanceApp } from "../support/allowances";
import { overflow, screenshot, widestElement } from "../support/screens";
import { db } from "@/lib/db";
import type { RequestView } from "@/contract";

type ToolResult = { structuredContent?: Record<string, unknown> };

describe("an allowance on /clients, as a person reads it", { timeout: 300_000 }, () => {
  let world: AllowanceApp & { browser: Browser };
  let app: RunningApp;
  let person: Person;
  let userId: string;
  let credentialId: string;
  const key = generatePrivateKey();
  const wallet = privateKeyToAccount(key);
  const clients: Client[] = [];

  before(async () => {
    world = await startAllowanceApp({ browser: true });
    app = world.app;
    ({ person, credentialId, userId } = await personWithShoppingWallet(world.browser, app, "reader@example.com", key));
  });
  after(async () => {
    for (const client of clients) await client.close();
    await world?.stop();
  });

  /** Nothing wider than the page at `width`; the screen written to test-results/screenshots. */
  async function fitsAt(page: Page, width: number, screen: string) {
    await page.setViewportSize({ width, height: 900 });
    await screenshot(page, `${screen}-${width}`);
    const excess = await overflow(page);
    assert.equal(excess, 0, `${screen} at ${width} px: ${excess} px too wide, ${await widestElement(page)}`);
  }

  async function openClients(page: Page, client: string): Promise<Locator> {
    await page.goto(`${app.appUrl}/clients`);
    return page.getByRole("listitem", { name: client }).getByRole("region", { name: "Allowance of Shopping on Local dev chain" });
  }

  it("says the allowance as consent did, what is left without ambiguity, each payment whole; a revoked one stays as history", async () => {
    const { page } = person;
    const shop = world.recipient();
    const { saveContact } = await import("@/lib/wallet/address-book");
    await saveContact(userId, { address: shop, label: "Alice" });
    await world.chain.fund(wallet.address, "0.01");
    const { client } = await connectAgent(app, page, "Words Agent", [{ name: "Shopping", mode: "approve" }]);
    clients.push(client);
    const grant = await db().grant.findFirstOrThrow({ where: { userId, client: { name: "Words Agent" } } });
    const given = await grantAllowanceFor(world.chain, wallet, { userId, credentialId, grantId: grant.id }, { recipients: [shop] });
    const paid = (await client.callTool({
      name: "send_transaction",
      arguments: { credential_id: credentialId, chain_id: world.chain.chainId, to: shop, value: String(parseEther("0.004")) },
    })) as ToolResult;
    assert.equal((paid.structuredContent as RequestView).status, "completed");

    await page.setViewportSize({ width: 1280, height: 900 });
    let allowance = await openClients(page, "Words Agent");
    // the consent card's line, with the days left and no pointer to the page it is on
    await allowance.getByText("0.01 ETH a day to Alice, for 7 days left, at most 3 payments in all.", { exact: true }).waitFor();
    // what is left until the reset, then the payments, which are counted over its whole life
    const left = allowance.getByRole("listitem").filter({ hasText: "left until it resets" });
    assert.match(
      (await left.textContent()) ?? "",
      /^0\.006 ETH left until it resets (at|on \d+ \w{3} at) \d\d:\d\d UTC\. 2 payments left in all \(this count never resets\)\.$/,
    );
    // the exact signed terms, one tap away
    const terms = allowance.getByText(/^Up to 0\.01 ETH per day, the day starting at \d\d:\d\d UTC, to 0x/);
    assert.equal(await terms.isVisible(), false);
    await allowance.getByText("The exact terms you signed").click();
    await terms.waitFor();
    // a table at a desktop's width: the amount and the payee side by side, the address whole in its column
    const side = await Promise.all([shop, "0.004 ETH"].map(async (name) => (await allowance.getByRole("cell", { name }).boundingBox())!.y));
    assert.equal(side[0], side[1]);
    await fitsAt(page, 1280, "clients-allowance-words");
    // on a phone each payment is stacked, its address across the page's width rather than a column of a few characters
    await fitsAt(page, 375, "clients-allowance-words");
    const to = allowance.getByRole("cell", { name: shop });
    assert.ok((await to.boundingBox())!.width > 250, `the payee's cell is ${(await to.boundingBox())!.width} px wide at 375 px`);
    const caption = (await allowance.getByText("Payments from this allowance").boundingBox())!;
    assert.ok(caption.height < 40, `the table's caption is ${caption.height} px high at 375 px`);
    // one below the other, each cell named by its column's header
    const amount = (await allowance.getByRole("cell", { name: "0.004 ETH" }).boundingBox())!;
    assert.ok((await to.boundingBox())!.y >= amount.y + amount.height - 1, "the payee is below the amount, not beside it");
    assert.equal(await to.evaluate((cell) => getComputedStyle(cell, "::before").content), '"To: "', "the payee's cell is named on a phone");

    // A second allowance for the same wallet and chain: both are live on chain until the first is disabled there.
    const row = page.getByRole("listitem", { name: "Words Agent" });
    await row.getByText("Give Shopping an allowance for Words Agent").click();
    const warning = row.getByText(/^Shopping already has an allowance for Words Agent on Local dev chain: /);
    await warning.waitFor();
    const said = (await warning.textContent()) ?? "";
    assert.match(said, /: 0\.01 ETH a day to Alice, for 7 days left, at most 3 payments in all\. /);
    assert.match(said, /both are live on chain/);
    assert.match(said, /the most it could pay from Shopping is their sum, up to 0\.01 ETH a day plus the new one's cap\.$/);
    await fitsAt(page, 375, "clients-second-allowance");
    await fitsAt(page, 1280, "clients-second-allowance");

    // Revoked, it stays readable: its terms, its payment and the transaction that disabled it.
    await allowance.getByRole("button", { name: "Revoke allowance" }).click();
    await page.getByRole("status").filter({ hasText: "Allowance disabled on chain" }).waitFor();
    assert.equal((await db().allowance.findUniqueOrThrow({ where: { id: given.id } })).status, "revoked");
    allowance = await openClients(page, "Words Agent");
    await allowance.getByText("Ended", { exact: true }).waitFor();
    await allowance.getByText("0.01 ETH a day to Alice, for 7 days, at most 3 payments in all.", { exact: true }).waitFor();
    await allowance.getByRole("cell", { name: "0.004 ETH" }).waitFor();
    assert.equal(await allowance.getByText("left until it resets").count(), 0, "nothing is left of an ended allowance");
    // nothing of it stays live: the wallet's give-an-allowance no longer warns of two
    await row.getByText("Give Shopping an allowance for Words Agent").click();
    assert.equal(await row.getByText(/already has an allowance/).count(), 0);
    await fitsAt(page, 375, "clients-allowance-ended");
    await fitsAt(page, 1280, "clients-allowance-ended");

    // A new allowance beside the ended one: two cards of one wallet and chain, each a landmark with a name of its own.
    await grantAllowanceFor(world.chain, wallet, { userId, credentialId, grantId: grant.id }, { recipients: [shop] });
    await page.goto(`${app.appUrl}/clients`);
    const cards = row.getByRole("region", { name: /^Allowance of Shopping on Local dev chain/ });
    await cards.nth(1).waitFor();
    assert.deepEqual(await cards.evaluateAll((regions) => regions.map((region) => region.getAttribute("aria-label"))), [
      "Allowance of Shopping on Local dev chain (1 of 2)",
      "Allowance of Shopping on Local dev chain (2 of 2)",
    ]);
  });

  it("at consent, the chosen approval mode reads whole on a phone, and what it means is said below it", async () => {
    const other = await newPerson(world.browser, app, "modes@example.com", ["Main"]);
    const { page } = other;
    const { callback } = await agentAsks(app, page, "Mode Agent");
    await page.setViewportSize({ width: 375, height: 900 });
    await page.getByRole("checkbox", { name: "Main", exact: true }).check();
    const mode = page.getByLabel("Approval mode for Main");
    assert.deepEqual(await mode.locator("option").evaluateAll((options) => options.map((option) => (option as HTMLOptionElement).value)), [
      "read",
      "approve",
      "allowance",
    ]);
    const explained = {
      read: "Read: can see balances and addresses only.",
      approve: "Approve: can ask you to approve each signature.",
      allowance: "Allowance: pays small amounts by itself, within an allowance you sign.",
    };
    for (const [value, words] of Object.entries(explained)) {
      await mode.selectOption(value);
      // the select's own text is not cut: it fits the room the select leaves beside its arrow
      const { text, width, room } = await mode.evaluate((element) => {
        const select = element as HTMLSelectElement;
        const style = getComputedStyle(select);
        const context = document.createElement("canvas").getContext("2d")!;
        context.font = style.font;
        const shown = select.selectedOptions[0].text;
        // the arrow takes about 20 px of the select's inner width
        const inner = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
        return { text: shown, width: context.measureText(shown).width, room: inner };
      });
      assert.ok(width <= room, `"${text}" is ${Math.round(width)} px in a select with ${Math.round(room)} px for it`);
      assert.equal(await page.getByText(words, { exact: true }).isVisible(), true);
      assert.equal(await mode.getAttribute("aria-describedby"), await page.getByText(words, { exact: true }).getAttribute("id"));
      await fitsAt(page, 375, `consent-mode-${value}`);
    }
    await fitsAt(page, 1280, "consent-mode-allowance");
    await callback.close();
    await other.context.close();
  });
});
