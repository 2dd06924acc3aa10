// What a person sees of an x402 payment their agent made within an allowance, with no tap (issue 56, items 4b and 4c):
// a person signed up in Chromium with a virtual passkey imports a wallet, signs its agent an allowance for Circle's
// USDC to a shop in their address book, and the agent pays the shop's resource (the real `@x402/express` middleware
// and the erc7710 facilitator). The payment's own page names the resource, its host apart from its path as the
// merchant's claim, and that it was paid within the allowance with no tap, never as a transaction to send; the audit
// log says it in the person's words, and its columns keep every word whole at 1280 px.
import { after, before, it } from "node:test";
import assert from "node:assert/strict";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Browser, Page } from "playwright-core";
import { signAllowanceFor } from "./allowances";
import { launchBrowser } from "./browser";
import { importWallet, newPerson } from "./consent";
import { mintFiatToken } from "./contracts";
import { brokenWords, checkScreen, overflow, VIEWPORTS, widestElement } from "./screens";
import { startX402App } from "./x402";
import { startPaidResourceAsking } from "./x402-resource";
import type { AgentContext } from "@/lib/wallet/agent-context";

const PRICE = 10_000n; // 0.01 USDC

export function noTapScreens(database: "sqlite" | "postgres") {
  let world: Awaited<ReturnType<typeof startX402App>>;
  let browser: Browser;
  let page: Page;
  let requestId: string;
  let resourceUrl: string;
  let shop: `0x${string}`;

  before(async () => {
    world = await startX402App(database);
    browser = await launchBrowser();
    const { db } = await import("@/lib/db");
    const { randomId } = await import("@/lib/crypto");
    const { saveContact } = await import("@/lib/wallet/address-book");
    const { payX402 } = await import("@/lib/x402/pay");

    // the person's wallet, whose key the test holds to sign the allowance as the page would
    const key = generatePrivateKey();
    const person = privateKeyToAccount(key);
    const email = `no-tap-${database}@example.com`;
    ({ page } = await newPerson(browser, world.app, email, []));
    await importWallet(page, "Main", key);
    await world.chain.fund(person.address, "1");
    await mintFiatToken(world.chain, world.token, person.address, 1_000_000n);
    const user = await db().user.findFirstOrThrow({ where: { email } });
    const credential = await db().credential.findFirstOrThrow({ where: { userId: user.id, name: "Main" } });
    shop = world.recipient();
    await saveContact(user.id, { address: shop, label: "Weather Shop" });

    // an agent of theirs holding the wallet in allowance mode, with an allowance of 0.05 USDC a day to the shop
    const client = await db().client.create({ data: { id: randomId("cl_"), kind: "oauth", name: "Paying Agent" } });
    const grant = await db().grant.create({ data: { id: randomId("gr_"), userId: user.id, clientId: client.id, scope: "mcp" } });
    await db().grantCredential.create({ data: { grantId: grant.id, credentialId: credential.id, mode: "allowance" } });
    await signAllowanceFor(
      world.chain,
      person,
      { userId: user.id, credentialId: credential.id, grantId: grant.id },
      {
        recipients: [shop],
        native: undefined,
        tokens: [{ address: world.token, perPeriod: 50_000n }],
        transactions: 5,
        overLimit: "refuse",
      },
    );
    const agent: AgentContext = {
      userId: user.id,
      userEmail: email,
      clientId: client.id,
      clientName: client.name,
      grantId: grant.id,
      via: "access_token",
      credentials: [{ credentialId: credential.id, mode: "allowance", name: "Main", kind: "evm", address: person.address }],
    };
    const { resource, required } = await startPaidResourceAsking({
      facilitator: world.facilitator,
      chainId: world.chain.chainId,
      token: world.token,
      payTo: shop,
      amount: PRICE,
      description: "Today's weather report",
    });
    world.resources.push(resource);
    resourceUrl = resource.url;
    const paid = await payX402(agent, credential.id, required);
    assert.ok(paid.header && paid.value, "paid with no tap");
    const served = await fetch(resource.url, { headers: { [paid.header]: paid.value } });
    assert.equal(served.status, 200, world.facilitator.lastRefusal() ?? undefined);
    requestId = (await db().agentRequest.findFirstOrThrow({ where: { grantId: grant.id } })).id;
  });
  after(async () => {
    await browser?.close();
    await world?.stop();
  });

  it("the payment's page names the resource as the merchant's claim and that it was paid with no tap, no transaction", async () => {
    const { host, pathname } = new URL(resourceUrl);
    for (const viewport of VIEWPORTS) {
      await page.setViewportSize(viewport);
      await page.goto(`${world.app.appUrl}/approvals/${requestId}`);
      await page.getByRole("heading", { name: "Paid for a resource", level: 1 }).waitFor();
      assert.equal((await page.locator(".headline").textContent())?.trim(), `Paid 0.01 USDC to Weather Shop for ${host}`);
      await page.getByRole("note").filter({ hasText: "Paid with no tap, within the allowance you signed for this agent" }).waitFor();
      const details = page.getByRole("region", { name: "Details" });
      assert.equal(await details.locator(".resource-host").textContent(), host);
      assert.equal(await details.locator(".resource-path").textContent(), pathname);
      await details.getByText("The merchant's claim", { exact: false }).waitFor();
      assert.equal(await details.getByText("0.01 USDC", { exact: true }).count(), 1, "the amount in USDC");
      assert.ok((await details.getByText(shop).count()) > 0, "the payee in full");
      assert.equal(await details.getByText("Weather Shop", { exact: true }).count(), 1, "the payee by the address book's name");
      // nothing of a transaction it never was
      const text = (await page.locator("main").innerText()).replace(/\s+/g, " ");
      for (const absent of ["Send a transaction", "0 gas", "Nonce", "set when you approve", "Call data", "0xa9059cbb", "Transfer 0.01"])
        assert.ok(!text.includes(absent), `the page says “${absent}”: ${text}`);
      assert.match(text, /Paid within your allowance, with no tap: signed for the merchant, whose facilitator settles it on chain/);
      assert.deepEqual(await checkScreen(page, `x402-no-tap-${database}-${viewport.name}`), []);
      assert.equal(await overflow(page), 0, `nothing scrolls sideways: ${await widestElement(page)}`);
    }
  });

  it("the approvals queue lists the payment as the payment it made, not as a transfer", async () => {
    const { host } = new URL(resourceUrl);
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${world.app.appUrl}/approvals`);
    const recent = page.getByRole("region", { name: "Recent" });
    const link = recent.getByRole("link", { name: `Paid 0.01 USDC to Weather Shop for ${host}`, exact: true });
    await link.waitFor();
    assert.equal(await link.getAttribute("href"), `/approvals/${requestId}`);
    assert.equal(await recent.getByRole("link", { name: /^Transfer / }).count(), 0, "a no-tap payment listed as a transfer");
  });

  it("the audit log says the payment and the allowance in the person's words, every column's words whole at 1280 px", async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${world.app.appUrl}/audit`);
    const table = page.locator(".audit-table").first();
    await table.waitFor();
    const rows = (await table.locator("tbody tr").allInnerTexts()).map((row) => row.replace(/\s+/g, " "));
    const all = rows.join("\n");
    assert.ok(
      rows.some((row) => row.includes(`Paid 0.01 USDC to Weather Shop for ${resourceUrl} from the allowance, without a tap`)),
      all,
    );
    assert.ok(
      rows.some((row) => row.includes("Allowance signed with your passkey on ") && row.includes("anything above it is refused")),
      all,
    );
    for (const raw of [" ?", "(tx", "of token 0x", "10000 "]) assert.ok(!all.includes(raw), `an audit row says “${raw}”: ${all}`);
    assert.deepEqual(await brokenWords(page, ".audit-table th, .audit-table td"), [], "a word broken across lines");
    // an event's type is one token: on one line
    const wrapped = await page.$$eval(".audit-table td[data-label='Event']", (cells) =>
      cells.flatMap((cell) => {
        const range = document.createRange();
        range.selectNodeContents(cell);
        const tops = new Set([...range.getClientRects()].filter((rect) => rect.width > 0).map((rect) => Math.round(rect.top)));
        return tops.size > 1 ? [cell.textContent ?? ""] : [];
      }),
    );
    assert.deepEqual(wrapped, [], "an event type wraps");
    assert.equal(await overflow(page), 0, `nothing scrolls sideways: ${await widestElement(page)}`);
    assert.deepEqual(await checkScreen(page, `audit-no-tap-${database}-1280`), []);
  });
}
