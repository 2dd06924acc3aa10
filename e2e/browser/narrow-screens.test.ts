// Nothing scrolls sideways on a 375 px phone, on any screen of docs/product.md §4, in the states where long words show up:
// a wallet's name of 100 characters without a space, an allowance's review at consent, requests waiting and one just
// sent (its transaction hash), typed data, an allowance on /clients with its payments and after "Revoke allowance"
// (the transaction that disabled it), the audit log's rows, and the pages of errors. In Chromium with a virtual
// passkey, against the started app on a hardhat chain with the Delegation Framework. A failure names what sticks out;
// each screen is written to test-results/screenshots as narrow-<screen>.png.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { parseEther } from "viem";
import type { RunningApp } from "../support/app";
import { startAllowanceApp, type AllowanceApp } from "../support/allowances";
import { agentAsks, chooseGrant, newPerson, redirected, type Person } from "../support/consent";
import { fillAllowanceFields, reviewedWords } from "../support/allowance-picker";
import { finishAndConnect } from "../support/mcp-client";
import { orderTypedData } from "../support/fixtures";
import { overflow, screenshot, widestElement } from "../support/screens";
import { db } from "@/lib/db";
import type { RequestView } from "@/contract";

const PHONE = { width: 375, height: 812 };
/** As long as a wallet's name may be, with no space to break it at. */
const LONG_NAME = "Household-savings-for-the-summer-holiday-in-Lisbon-and-the-long-drive-back-through-Spain-2027-fund";
const LONG_HEX = `0x${"c0ffee".repeat(21)}`;

type ToolResult = { isError?: boolean; structuredContent?: unknown; content: { text: string }[] };

describe("nothing scrolls sideways at 375 px", { timeout: 600_000 }, () => {
  let world: AllowanceApp & { browser: Browser };
  let app: RunningApp;
  let person: Person;
  let agent: Client;
  let mainId: string;
  /** The test's screens that are wider than the phone, with what sticks out. */
  let tooWide: Record<string, string> = {};

  before(async () => {
    world = await startAllowanceApp({ browser: true });
    app = world.app;
  });
  after(async () => {
    await agent?.close();
    await world?.stop();
  });

  /** The screen as it is now: written to test-results/screenshots, and measured against the phone's width. */
  async function look(page: Page, screen: string) {
    await page.waitForLoadState("networkidle");
    await screenshot(page, `narrow-${screen}`);
    const excess = await overflow(page);
    if (excess) tooWide[screen] = `${excess} px wider than the screen: ${await widestElement(page)}`;
  }

  async function ask(tool: string, args: Record<string, unknown>): Promise<RequestView> {
    const result = (await agent.callTool({ name: tool, arguments: args })) as ToolResult;
    assert.ok(!result.isError, `${tool}: ${result.content[0]?.text}`);
    return result.structuredContent as RequestView;
  }

  it("signed out: sign-in, a device's code, an approval link, an authorization error, a closed consent, not found", async () => {
    tooWide = {};
    const visitor = await world.browser.newContext({ viewport: PHONE });
    const page = await visitor.newPage();
    for (const [screen, path] of [
      ["sign-in", "/"],
      ["device-signed-out", "/device?user_code=BCDF-GHJK"],
      ["approval-signed-out", "/approvals/rq_unknown"],
      ["authorize-error", "/oauth/authorize?client_id=c_unknown"],
      ["consent-unknown", "/consent?request=unknown"],
      ["not-found-signed-out", "/no-such-page"],
    ]) {
      await page.goto(`${app.appUrl}${path}`);
      await look(page, screen);
    }
    await visitor.close();
    assert.deepEqual(tooWide, {});
  });

  it("signed in: every screen, with long names, an allowance, requests and their outcomes", async () => {
    tooWide = {};
    person = await newPerson(world.browser, app, "narrow@example.com", ["Main", LONG_NAME]);
    const { page } = person;
    await page.setViewportSize(PHONE);
    page.on("dialog", (dialog) => void dialog.accept());
    const main = await db().credential.findFirstOrThrow({ where: { name: "Main" } });
    mainId = main.id;
    await world.chain.fund(main.address, "1");
    await page.goto(`${app.appUrl}/wallets`);
    await page.getByText(LONG_NAME).first().waitFor();
    await look(page, "wallets");

    // Consent: both wallets chosen, Main with an allowance whose review is shown.
    const shop = world.recipient();
    const { provider, callback } = await agentAsks(app, page, "Narrow Agent");
    await look(page, "consent");
    await chooseGrant(page, { name: LONG_NAME, mode: "approve" });
    await page.getByRole("checkbox", { name: "Main", exact: true }).check();
    await page.getByLabel("Approval mode for Main").selectOption("allowance");
    await fillAllowanceFields(page, { coin: "0.01", recipient: shop, transactions: 3, over: "ask" });
    await reviewedWords(page);
    await look(page, "consent-allowance-review");
    await page.getByRole("button", { name: "Approve with passkey" }).click();
    agent = await finishAndConnect(app.baseUrl, provider, (await redirected(page, callback)).get("code")!);
    await callback.close();

    // Requests waiting: a payment the allowance does not cover (to someone else), typed data, a long message.
    const payment = await ask("send_transaction", {
      credential_id: mainId,
      chain_id: world.chain.chainId,
      to: world.recipient(),
      value: String(parseEther("0.002")),
    });
    const typed = await ask("sign_typed_data", { credential_id: mainId, typed_data: orderTypedData("Narrow Test", LONG_HEX) });
    const longWallet = await db().credential.findFirstOrThrow({ where: { name: LONG_NAME } });
    await ask("sign_message", { credential_id: longWallet.id, message: `Sign in with nonce ${LONG_HEX}` });
    await page.goto(`${app.appUrl}/approvals`);
    await look(page, "approvals");
    await page.goto(typed.approval_url);
    await page.getByRole("button", { name: "Approve with passkey" }).waitFor();
    await look(page, "approval-typed-data");
    await page.goto(payment.approval_url);
    await page.getByRole("button", { name: "Approve with passkey" }).waitFor();
    await look(page, "approval-pending");
    await page.getByRole("button", { name: "Approve with passkey" }).click();
    await page.getByRole("status").filter({ hasText: "Approved and sent" }).waitFor();
    await look(page, "approval-just-approved");
    await page.reload();
    await page.getByText("Transaction hash", { exact: true }).waitFor();
    await look(page, "approval-approved");

    // The allowance on /clients with a payment made from it, then disabled on chain.
    const paid = await ask("send_transaction", {
      credential_id: mainId,
      chain_id: world.chain.chainId,
      to: shop,
      value: String(parseEther("0.001")),
    });
    assert.equal(paid.status, "completed");
    await page.goto(`${app.appUrl}/clients`);
    const allowance = page.getByRole("region", { name: /^Allowance of Main on / });
    await allowance.getByRole("button", { name: "Revoke allowance" }).waitFor();
    await look(page, "clients-allowance");
    await allowance.getByRole("button", { name: "Revoke allowance" }).click();
    await page.getByRole("status").filter({ hasText: "Allowance disabled on chain" }).waitFor();
    await look(page, "clients-allowance-revoked");

    for (const screen of ["audit", "settings", "connect", "device", "device?user_code=BCDF-GHJK", "no-such-page"]) {
      await page.goto(`${app.appUrl}/${screen}`);
      await look(page, screen.replace("?user_code=BCDF-GHJK", "-with-code"));
    }
    assert.deepEqual(tooWide, {});
  });
});
