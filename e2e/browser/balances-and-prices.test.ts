// What the person owns and what it is worth, where they decide: Wallets, consent and approval pages show the coin and
// the tokens their requests named, valued from Chainlink aggregators (@chainlink/contracts' MockV3Aggregator) read on
// the local chain; a send says what it leaves, in a few digits with the exact amount a tap away, and the headline's
// value sits under it on a phone's first screen. A token without a feed, with a stale one or with one that reverts shows
// no value. The queue and its notifications value each request's amounts the same way. With the node stopped, the
// approval page still renders, says the balance is unavailable, and Approve works.
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import { encodeFunctionData, erc20Abi, formatEther, parseEther, parseUnits, verifyMessage, type Address, type Hex } from "viem";
import { db } from "@/lib/db";
import { moneyText, readableDecimal } from "@/lib/prices/format";
import type { PreparedTransaction } from "@/lib/wallet/request-payload";
import { deployer, deployErc20 } from "../support/contracts";
import { agentAsks } from "../support/consent";
import { deployPriceFeed, sendToken, setRound } from "@/test-chain/price-feeds";
import { signingAgent } from "../support/signing-agent";

const SCREENSHOTS = path.resolve("test-results", "screenshots");
const FRIEND = "0x000000000000000000000000000000000000bEEF";
const VIEWPORTS = [
  { name: "phone", width: 375, height: 812 },
  { name: "desktop", width: 1280, height: 800 },
];

/** Every balance and value has streamed in and is shown: no placeholder still reads (React reveals them in batches). */
async function settled(page: Page) {
  await page.waitForFunction(() => document.querySelector('[aria-busy="true"]') === null);
}

/** The text of the summary line labelled `label` (a `dt` and its `dd`). */
function field(page: Page, label: string) {
  return page
    .locator("dt")
    .filter({ hasText: new RegExp(`^${label}$`) })
    .locator("xpath=following-sibling::dd[1]");
}

describe("balances and their value in money where the person decides", { timeout: 300_000 }, () => {
  const tokens = {} as Record<"tst" | "nof" | "stl" | "rev", Address>;
  const suite = signingAgent({
    email: "prices@example.com",
    agentName: "Price Agent",
    env: async (chain) => {
      const holder = (await deployer(chain)).account.address;
      const token = (name: string, symbol: string) => deployErc20(chain, { name, symbol, supply: parseUnits("1000", 18), holder });
      tokens.tst = await token("Test Token", "TST");
      tokens.nof = await token("No Feed", "NOF");
      tokens.stl = await token("Stale Feed", "STL");
      tokens.rev = await token("Broken Feed", "REV");
      const eth = await deployPriceFeed(chain, { answer: 2000_00000000n, decimals: 8 });
      const tst = await deployPriceFeed(chain, { answer: 1_50000000n, decimals: 8 });
      const stale = await deployPriceFeed(chain, { answer: 1_00000000n, decimals: 8 });
      await setRound(chain, stale, { answer: 1_00000000n, updatedAt: BigInt(Math.floor(Date.now() / 1000) - 2 * 3600) });
      // REV's "feed" is a contract without latestRoundData (the NOF token): every read of it reverts.
      const feeds = { native: eth, tokens: { [tokens.tst]: tst, [tokens.stl]: stale, [tokens.rev]: tokens.nof } };
      return { PRICE_FEEDS: JSON.stringify({ [chain.chainId]: feeds }), PRICE_CURRENCY: "USD" };
    },
  });
  const ask = (tool: string, args: Record<string, unknown>) => suite.ask(tool, args);
  const transfer = (token: Address, amount: string) =>
    ask("send_transaction", {
      chain_id: 31337,
      to: token,
      value: "0",
      data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [FRIEND, parseUnits(amount, 18)] }),
    });

  before(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    for (const token of Object.values(tokens)) await sendToken(suite.chain, token, suite.wallet.address, parseUnits("100", 18));
  });

  for (const viewport of VIEWPORTS) {
    it(`a send at ${viewport.width}×${viewport.height}: amount and fee in dollars, the balance and what it leaves`, async () => {
      const { page } = suite.person;
      await page.setViewportSize(viewport);
      const request = await ask("send_transaction", { chain_id: 31337, to: FRIEND, value: String(parseEther("0.1")) });
      await page.goto(request.approval_url);
      await settled(page);
      // The headline's value in money under it, on the first screen.
      const headlineValue = page.locator(".headline-values");
      assert.equal(await headlineValue.innerText(), "0.1 ETH (≈ $200.00)");
      const valueBox = await headlineValue.boundingBox();
      assert.ok(valueBox && valueBox.y + valueBox.height <= viewport.height, "the value is on the first screen");
      assert.equal(await field(page, "Amount").innerText(), "0.1 ETH (≈ $200.00)");
      assert.match(await field(page, "Maximum network fee").innerText(), /^[\d.]+ ETH \(≈ (\$\d+\.\d\d|< \$0\.01)\) · \d+ gas at up to/);
      assert.equal(await field(page, "Balance").innerText(), "10 ETH (≈ $20,000.00)");
      const { transaction } = JSON.parse((await db().agentRequest.findUniqueOrThrow({ where: { id: request.request_id } })).payload) as {
        transaction: PreparedTransaction;
      };
      const left = parseEther("9.9") - BigInt(transaction.gas) * BigInt(transaction.maxFeePerGas);
      const money = moneyText(left, 18, { answer: 2000_00000000n, decimals: 8 }, "USD");
      // What it leaves, in a few digits; the exact amount one tap away.
      const after = field(page, "Balance after");
      assert.notEqual(readableDecimal(formatEther(left)), formatEther(left), "the fee leaves a long decimal");
      assert.equal(
        await after.innerText(),
        `${readableDecimal(formatEther(left))} ETH (≈ ${money})\nif the whole maximum network fee is paid`,
      );
      await after.getByText(`${readableDecimal(formatEther(left))} ETH (≈ ${money})`, { exact: true }).click();
      await after.getByText(`exactly ${formatEther(left)} ETH`).waitFor();
      const approve = await page.getByRole("button", { name: "Approve with passkey" }).boundingBox();
      assert.ok(approve && approve.y + approve.height <= viewport.height, "Approve stays on the first screen");
      await page.screenshot({ path: path.join(SCREENSHOTS, `approval-balances-${viewport.name}.png`), fullPage: true });
      await page.getByRole("button", { name: "Reject" }).click();
      await page.getByRole("status").filter({ hasText: "Rejected. Nothing was signed." }).waitFor();
    });
  }

  it("a token transfer: the amount in dollars, the token's balance and what it leaves; once decided, no value", async () => {
    const { page } = suite.person;
    await page.setViewportSize(VIEWPORTS[0]);
    await page.goto((await transfer(tokens.tst, "2")).approval_url);
    await settled(page);
    assert.match(await field(page, "Amount").innerText(), /^2 TST \(≈ \$3\.00\) \(raw integer 2000000000000000000\)$/);
    assert.match(await field(page, "Balance").innerText(), /^10 ETH \(≈ \$20,000\.00\)\n100 TST \(≈ \$150\.00\)$/);
    assert.match(await field(page, "Balance after").innerText(), /\n98 TST \(≈ \$147\.00\)\n/);
    await page.getByRole("button", { name: "Reject" }).click();
    await page.getByRole("status").filter({ hasText: "Rejected. Nothing was signed." }).waitFor();
    // decided: today's value is not what the person decided on, so none is shown
    await page.reload();
    await settled(page);
    assert.equal(await field(page, "Amount").innerText(), "2 TST (raw integer 2000000000000000000)");
  });

  it("an approval: the approved token's balance beside it; nothing leaves the wallet but the fee", async () => {
    const { page } = suite.person;
    await page.setViewportSize(VIEWPORTS[1]);
    const request = await ask("send_transaction", {
      chain_id: 31337,
      to: tokens.tst,
      value: "0",
      data: encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [FRIEND, parseUnits("5", 18)] }),
    });
    await page.goto(request.approval_url);
    await settled(page);
    assert.match(await field(page, "Amount").innerText(), /^5 TST \(≈ \$7\.50\) /);
    assert.equal(await field(page, "Balance").innerText(), "10 ETH (≈ $20,000.00)\n100 TST (≈ $150.00)");
    assert.doesNotMatch(await field(page, "Balance after").innerText(), /TST/);
    await page.getByRole("button", { name: "Reject" }).click();
    await page.getByRole("status").filter({ hasText: "Rejected. Nothing was signed." }).waitFor();
  });

  for (const [what, token, symbol] of [
    ["no feed", "nof", "NOF"],
    ["a stale feed", "stl", "STL"],
    ["a feed that reverts", "rev", "REV"],
  ] as const) {
    it(`a token with ${what}: its amounts and balance carry no value in money, never a guess`, async () => {
      const { page } = suite.person;
      await page.setViewportSize(VIEWPORTS[1]);
      // Once settled, every value that will come has come.
      await page.goto((await transfer(tokens[token], "1")).approval_url);
      await settled(page);
      assert.match(await field(page, "Amount").innerText(), new RegExp(`^1 ${symbol} \\(raw integer`));
      assert.match(await field(page, "Balance").innerText(), new RegExp(`\\n100 ${symbol}$`));
      assert.match(await field(page, "Balance after").innerText(), new RegExp(`\\n99 ${symbol}\\n`));
      assert.equal(await page.getByText(new RegExp(`${symbol} \\(≈`)).count(), 0);
      await page.getByRole("button", { name: "Reject" }).click();
      await page.getByRole("status").filter({ hasText: "Rejected. Nothing was signed." }).waitFor();
    });
  }

  for (const viewport of VIEWPORTS) {
    it(`Wallets at ${viewport.width}×${viewport.height}: the coin and the tokens its requests named, with their value`, async () => {
      const { page } = suite.person;
      await page.setViewportSize(viewport);
      await page.goto(`${suite.app.appUrl}/wallets`);
      await settled(page);
      const holdings = page.getByRole("group", { name: "What Main holds" });
      await page.screenshot({ path: path.join(SCREENSHOTS, `wallets-balances-${viewport.name}.png`), fullPage: true });
      const lines = await holdings.getByRole("listitem").allInnerTexts();
      assert.deepEqual([...lines].sort(), ["10 ETH (≈ $20,000.00)", "100 NOF", "100 REV", "100 STL", "100 TST (≈ $150.00)"]);
      await page.screenshot({ path: path.join(SCREENSHOTS, `wallets-balances-${viewport.name}.png`), fullPage: true });
    });
  }

  it("consent: what each wallet holds, before the person chooses", async () => {
    const { page } = suite.person;
    await page.setViewportSize(VIEWPORTS[0]);
    const { callback } = await agentAsks(suite.app, page, "Curious Agent");
    await settled(page);
    const holdings = page.getByRole("group", { name: "What Main holds" });
    assert.ok((await holdings.getByRole("listitem").allInnerTexts()).includes("10 ETH (≈ $20,000.00)"));
    await page.screenshot({ path: path.join(SCREENSHOTS, "consent-balances-phone.png"), fullPage: true });
    await page.getByRole("button", { name: "Deny" }).click();
    assert.equal((await callback.received).get("error"), "access_denied");
    await callback.close();
  });

  it("the queue: each waiting request's amounts in dollars, streamed after the list; none from a stale feed", async () => {
    const { page } = suite.person;
    await page.setViewportSize(VIEWPORTS[0]);
    const send = await ask("send_transaction", { chain_id: 31337, to: FRIEND, value: String(parseEther("0.1")) });
    const tst = await transfer(tokens.tst, "2");
    const stale = await transfer(tokens.stl, "1");
    await page.goto(`${suite.app.appUrl}/approvals`);
    await settled(page);
    const row = (request: { request_id: string }) => page.locator(`li:has(> div > a[href="/approvals/${request.request_id}"])`);
    assert.equal(await row(send).locator(".money").innerText(), "0.1 ETH (≈ $200.00)");
    assert.equal(await row(tst).locator(".money").innerText(), "2 TST (≈ $3.00)");
    assert.match(await row(stale).innerText(), /^Transfer 1 STL to /);
    assert.equal(await row(stale).locator(".money").count(), 0);
    assert.equal(await page.getByText(/STL \(≈/).count(), 0);
    // Decided requests (the earlier tests' rejected ones) carry no value: today's is not the one they were decided at.
    assert.equal(await page.getByRole("region", { name: "Recent" }).locator(".money").count(), 0);
    await page.screenshot({ path: path.join(SCREENSHOTS, "queue-values-phone.png"), fullPage: true });
  });

  it("a new request's notification carries its amount's value", async () => {
    const { context, page } = suite.person;
    await context.grantPermissions(["notifications"], { origin: suite.app.appUrl });
    // Each notification the page shows, recorded (the npm-packaged headless Chromium reports "denied" whatever was granted).
    await context.addInitScript(() => {
      const shown: string[] = [];
      (window as unknown as { shownNotifications: string[] }).shownNotifications = shown;
      window.Notification = class extends window.Notification {
        static get permission(): NotificationPermission {
          return "granted";
        }
        constructor(title: string, options?: NotificationOptions) {
          super(title, options);
          shown.push(options?.body ?? "");
        }
      } as typeof Notification;
    });
    await page.goto(`${suite.app.appUrl}/approvals`);
    await settled(page);
    await ask("send_transaction", { chain_id: 31337, to: FRIEND, value: String(parseEther("0.2")) });
    const shown = await page.waitForFunction(() => (window as unknown as { shownNotifications: string[] }).shownNotifications[0]);
    assert.match(String(await shown.jsonValue()), /^Send 0\.2 ETH to \S+ on [^·]+ · 0\.2 ETH \(≈ \$400\.00\) · /);
  });

  it("with the node stopped the approval page renders, says the balance is unavailable, and Approve signs", async () => {
    const { page } = suite.person;
    await page.setViewportSize(VIEWPORTS[0]);
    const send = await ask("send_transaction", { chain_id: 31337, to: FRIEND, value: String(parseEther("0.1")) });
    const message = await ask("sign_message", { message: "Signed while the node is down" });
    await suite.chain.stop();

    await page.goto(send.approval_url);
    await settled(page);
    assert.equal(await field(page, "Balance").innerText(), "ETH balance unavailable");
    assert.equal(await field(page, "Balance after").innerText(), "ETH balance unavailable\nif the whole maximum network fee is paid");
    assert.equal(await page.getByRole("button", { name: "Approve with passkey" }).isEnabled(), true);
    await page.screenshot({ path: path.join(SCREENSHOTS, "approval-node-down-phone.png"), fullPage: true });

    await page.goto(message.approval_url);
    await settled(page);
    assert.match(await field(page, "Balance").innerText(), /^ETH balance unavailable\n/);
    await page.getByRole("button", { name: "Approve with passkey" }).click();
    await page.getByRole("status").filter({ hasText: "Approved" }).waitFor();
    const done = (await suite.agent.callTool({ name: "get_request", arguments: { request_id: message.request_id } })) as unknown as {
      structuredContent: { signature: Hex };
    };
    const signed = await verifyMessage({
      address: suite.wallet.address,
      message: "Signed while the node is down",
      signature: done.structuredContent.signature,
    });
    assert.equal(signed, true);
  });
});
