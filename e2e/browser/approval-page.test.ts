// The approval page as a person on a phone or a desktop meets it, in Chromium with a virtual passkey: one
// sentence says what approving does, who asks and since when, the decision is on the first screen at
// 375×812 and at 1280×800, it works by keyboard alone, a desktop offers a QR code that decodes to the
// page's own address, and the outcome reads in words. Each screen is written to test-results/screenshots.
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import jsQR from "jsqr";
import { PNG } from "pngjs";
import type { Page } from "playwright-core";
import { encodeFunctionData, erc20Abi, parseEther, parseUnits, verifyMessage, type Address, type Hex } from "viem";
import { deployErc20 } from "../support/contracts";
import { signingAgent } from "../support/signing-agent";

const SCREENSHOTS = path.resolve("test-results", "screenshots");
const FRIEND = "0x000000000000000000000000000000000000bEEF";
const VIEWPORTS = [
  { name: "phone", width: 375, height: 812 },
  { name: "desktop", width: 1280, height: 800 },
];

/** The element lies entirely within the first screen: reachable without scrolling. */
async function onFirstScreen(page: Page, name: string) {
  const box = await page.getByRole("button", { name }).boundingBox();
  const viewport = page.viewportSize()!;
  assert.ok(box && box.y >= 0 && box.y + box.height <= viewport.height, `${name} at ${JSON.stringify(box)} in ${viewport.height}px`);
}

describe("the approval page on a phone and a desktop", { timeout: 300_000 }, () => {
  const EXPLORER = "https://explorer.example";
  const suite = signingAgent({ email: "phone@example.com", agentName: "Pocket Agent", explorerUrl: EXPLORER });
  const ask = (tool: string, args: Record<string, unknown>) => suite.ask(tool, args);
  let token: Address;

  before(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    token = await deployErc20(suite.chain, {
      name: "Test Token",
      symbol: "TST",
      supply: parseUnits("100", 18),
      holder: suite.wallet.address,
    });
  });

  const cases = [
    {
      what: "message",
      request: () => ask("sign_message", { message: "Log in to Example" }),
      headline: "Sign a message with Main",
    },
    {
      what: "transaction",
      request: () => ask("send_transaction", { chain_id: 31337, to: FRIEND, value: String(parseEther("0.05")) }),
      headline: "Send 0.05 ETH to 0x0000…bEEF on Local dev chain",
    },
    {
      what: "contract call",
      request: () =>
        ask("send_transaction", {
          chain_id: 31337,
          to: token,
          value: "0",
          data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [FRIEND, parseUnits("2.5", 18)] }),
        }),
      headline: "Transfer 2.5 TST to 0x0000…bEEF on Local dev chain",
    },
  ];

  for (const viewport of VIEWPORTS) {
    for (const example of cases) {
      it(`${example.what} at ${viewport.width}×${viewport.height}: the sentence, who asks, the decision on the first screen`, async () => {
        const { page } = suite.person;
        await page.setViewportSize(viewport);
        const request = await example.request();
        await page.goto(request.approval_url);
        await page.getByText(example.headline, { exact: true }).waitFor();
        await page.getByText(/Asked by an application that calls itself “Pocket Agent” · sends you back to \S+ · connected/).waitFor();
        await page.getByText(/Waiting for you until/).waitFor();
        await onFirstScreen(page, "Approve with passkey");
        await onFirstScreen(page, "Reject");
        const handoff = page.getByText("Approve on your phone");
        assert.equal(await handoff.isVisible(), viewport.name === "desktop", "the QR hand-off is offered on a desktop only");
        await page.screenshot({
          path: path.join(SCREENSHOTS, `approval-${example.what.replace(" ", "-")}-${viewport.name}.png`),
          fullPage: true,
        });
        await page.getByRole("button", { name: "Reject" }).click();
        await page.getByRole("status").filter({ hasText: "Rejected. Nothing was signed." }).waitFor();
      });
    }
  }

  it("hidden characters in a message are shown escaped with a warning, and the exact text is signed; plain text has none", async () => {
    const { page } = suite.person;
    await page.setViewportSize(VIEWPORTS[0]);
    // Reads "Pay Alice 1 ETH" with the override: the person must see the characters that make it so.
    const message = "Pay \u202EHTE 1 ecilA\u202C\u200B\u0007\nthen stop";
    const request = await ask("sign_message", { message });
    await page.goto(request.approval_url);
    const details = page.getByRole("region", { name: "Details" });
    const shown = details.locator("pre.message");
    assert.equal(await shown.innerText(), "Pay ⟨U+202E⟩HTE 1 ecilA⟨U+202C⟩⟨U+200B⟩⟨U+0007⟩\nthen stop");
    assert.deepEqual(await shown.locator("mark.hidden-character").allInnerTexts(), ["⟨U+202E⟩", "⟨U+202C⟩", "⟨U+200B⟩", "⟨U+0007⟩"]);
    const warning = details.getByRole("note").filter({ hasText: "4 characters you could not see or that change the direction of text" });
    assert.equal(await warning.isVisible(), true);
    await page.getByRole("button", { name: "Approve with passkey" }).click();
    await page.getByRole("status").filter({ hasText: "Approved" }).waitFor();
    const done = (await suite.agent.callTool({ name: "get_request", arguments: { request_id: request.request_id } })) as unknown as {
      structuredContent: { signature: Hex };
    };
    assert.equal(await verifyMessage({ address: suite.wallet.address, message, signature: done.structuredContent.signature }), true);

    // Line breaks, tabs and emoji sequences are text as written, with no warning.
    const plain = await ask("sign_message", { message: "Log in to Example\n\tNonce: 42 👩‍💻" });
    await page.goto(plain.approval_url);
    assert.equal(await details.locator("pre.message").innerText(), "Log in to Example\n\tNonce: 42 👩‍💻");
    assert.equal(await details.getByRole("note").count(), 0);
    await page.getByRole("button", { name: "Reject" }).click();
    await page.getByRole("status").filter({ hasText: "Rejected. Nothing was signed." }).waitFor();
  });

  it("the QR code on a desktop decodes to the page's own address", async () => {
    const { page } = suite.person;
    await page.setViewportSize(VIEWPORTS[1]);
    const request = await ask("sign_message", { message: "Scan me" });
    await page.goto(request.approval_url);
    await page.getByText("Approve on your phone").click();
    const image = PNG.sync.read(await page.getByRole("img", { name: "QR code of this approval page's address" }).screenshot());
    const decoded = jsQR(new Uint8ClampedArray(image.data), image.width, image.height);
    assert.equal(decoded?.data, request.approval_url);
    await page.getByRole("button", { name: "Reject" }).click();
    await page.getByRole("status").filter({ hasText: "Rejected. Nothing was signed." }).waitFor();
  });

  it("a request is approved by keyboard alone, and the outcome says what happened", async () => {
    const { page } = suite.person;
    await page.setViewportSize(VIEWPORTS[0]);
    const request = await ask("send_transaction", { chain_id: 31337, to: FRIEND, value: String(parseEther("0.01")) });
    await page.goto(request.approval_url);
    await page.getByText(/Waiting for you until/).waitFor();
    // Tab from the top of the page to the decision: the first focusable control after the header's links.
    for (let presses = 0; presses < 30; presses++) {
      await page.keyboard.press("Tab");
      const focused = await page.evaluate(() => document.activeElement?.textContent ?? "");
      if (focused === "Approve with passkey") break;
    }
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Approve with passkey");
    await page.keyboard.press("Enter");
    await page.getByRole("status").filter({ hasText: "Approved and sent" }).waitFor();
    await page.reload();
    await page.getByText(/Done: the transaction is included in a block\.|Approved and sent to the network/).waitFor();
    // The chain has an explorer: the sent transaction links to it.
    const done = (await suite.agent.callTool({ name: "get_request", arguments: { request_id: request.request_id } })) as unknown as {
      structuredContent: { tx_hash: string };
    };
    const link = page.getByRole("link", { name: "View on the explorer" });
    assert.equal(await link.getAttribute("href"), `${EXPLORER}/tx/${done.structuredContent.tx_hash}`);
    await page.screenshot({ path: path.join(SCREENSHOTS, "approval-completed-phone.png"), fullPage: true });
  });

  it("the Approvals screen counts waiting requests in its title and announces a new one with a notification", async () => {
    const { context, page } = suite.person;
    await context.grantPermissions(["notifications"], { origin: suite.app.appUrl });
    // Record each notification the page shows, passing it on to the browser's own. The permission granted above is
    // the one the page reads: a headless build without a notification service (the npm-packaged Chromium) reports
    // "denied" whatever was granted.
    await context.addInitScript(() => {
      const Native = window.Notification;
      const shown: string[] = [];
      (window as unknown as { shownNotifications: string[] }).shownNotifications = shown;
      window.Notification = class extends Native {
        static get permission(): NotificationPermission {
          return "granted";
        }
        constructor(title: string, options?: NotificationOptions) {
          super(title, options);
          shown.push(`${title}: ${options?.body ?? ""}`);
        }
      } as typeof Notification;
    });
    await page.goto(`${suite.app.appUrl}/approvals`);
    await page.getByRole("heading", { name: "Waiting for you (0)" }).waitFor();
    assert.equal(await page.title(), "Approvals · Agent Wallet");
    await ask("sign_message", { message: "Ring ring" });
    await page.getByRole("heading", { name: "Waiting for you (1)" }).waitFor();
    await page.waitForFunction(() => document.title === "(1) Approvals · Agent Wallet");
    const shown = await page.waitForFunction(() => (window as unknown as { shownNotifications: string[] }).shownNotifications[0]);
    assert.equal(
      await shown.jsonValue(),
      "A request waits for your approval: Sign a message with Main · Ring ring · Asked by Pocket Agent",
    );
    await page.screenshot({ path: path.join(SCREENSHOTS, "approvals-phone.png"), fullPage: true });
  });
});
