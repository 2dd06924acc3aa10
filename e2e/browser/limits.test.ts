// Spending limits on the Clients screen, in the browser with a virtual passkey: what is spent of a daily cap
// shows at once (a pending request holds its amount), and a change of limits, approved with the passkey,
// holds the agent to the new rules on its very next request. Every limit reads in the chain's own coin (here
// one called DEV) and a token cap in the token's units with its symbol; a new key refuses unlimited approvals,
// in view, unless the person unchecks it.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Browser } from "playwright-core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { encodeFunctionData, erc20Abi, parseEther, type Address } from "viem";
import { startApp, type RunningApp } from "../support/app";
import { launchBrowser } from "../support/browser";
import { startChain, type LocalChain } from "../support/chain";
import { deployErc20 } from "../support/contracts";
import { newPerson, type Person } from "../support/consent";
import { connectWithBearer } from "../support/mcp-client";
import { db } from "@/lib/db";

const FRIEND = "0x000000000000000000000000000000000000bEEF";
type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { text?: string }[] };

describe("spending limits on the Clients screen", { timeout: 300_000 }, () => {
  let chain: LocalChain;
  let app: RunningApp;
  let browser: Browser;
  let person: Person;
  let bot: Client;
  let mainId: string;
  let mainAddress: Address;

  const send = async (ether: string) =>
    (await bot.callTool({
      name: "send_transaction",
      arguments: { credential_id: mainId, chain_id: chain.chainId, to: FRIEND, value: String(parseEther(ether)) },
    })) as ToolResult;

  before(async () => {
    chain = await startChain();
    // A coin that is not ETH: what the limits say comes from the chain's configuration, never a fixed ETH.
    app = await startApp({
      env: { CHAINS: JSON.stringify([{ id: chain.chainId, name: "Dev chain", rpcUrl: chain.rpcUrl, symbol: "DEV" }]) },
    });
    browser = await launchBrowser();
    person = await newPerson(browser, app, "budget@example.com", ["Main"]);
    const main = await db().credential.findFirstOrThrow({ where: { name: "Main" } });
    mainId = main.id;
    mainAddress = main.address as Address;
    await chain.fund(main.address, "10");

    const { page } = person;
    await page.goto(`${app.appUrl}/clients`);
    await page.getByLabel("Key name").fill("Budget bot");
    await page.getByRole("checkbox", { name: "Main", exact: true }).check();
    await page.getByLabel("Approval mode for Main").selectOption("approve");
    await page.getByLabel("Spending limits for Main").selectOption({ label: "Up to 0.05 DEV a transaction, 0.2 DEV a day" });
    // On by default and in view beside the preset, not under the custom rules.
    assert.equal(await page.getByRole("checkbox", { name: "Refuse unlimited approvals for Main" }).isChecked(), true);
    await page.getByRole("button", { name: "Create API key" }).click();
    bot = await connectWithBearer(app.baseUrl, (await page.getByTestId("new-api-key").textContent())!.trim());
  });
  after(async () => {
    await bot?.close();
    await browser?.close();
    await app?.stop();
    await chain?.stop();
  });

  it("the limits form names the chain's coin: the preset and every amount field say DEV", async () => {
    const { page } = person;
    await page.goto(`${app.appUrl}/clients`);
    await page.getByRole("checkbox", { name: "Main", exact: true }).check();
    await page.getByLabel("Approval mode for Main").selectOption("approve");
    const limits = page.getByLabel("Spending limits for Main");
    assert.deepEqual(await limits.locator("option").allInnerTexts(), [
      "Ask me for everything",
      "Up to 0.05 DEV a transaction, 0.2 DEV a day",
      "Custom",
    ]);
    await limits.selectOption({ label: "Custom" });
    for (const label of ["Per transaction (DEV) for Main", "Per day (DEV) for Main", "Per week (DEV) for Main"])
      await page.getByLabel(label, { exact: true }).waitFor();
  });

  it("shows the limits and today's spend, counting a pending request from the moment it exists", async () => {
    const pending = await send("0.04");
    assert.ok(!pending.isError, pending.content?.[0]?.text);
    const { page } = person;
    await page.goto(`${app.appUrl}/clients`);
    const row = page.getByRole("listitem", { name: "Budget bot" });
    await row.getByText("Limits for Main: up to 0.05 DEV a transaction · 0.2 DEV a day · refuses unlimited approvals").waitFor();
    const today = row.getByRole("progressbar", { name: "Spent today with Main" });
    assert.equal(await today.getAttribute("value"), "0.2");
    await row.getByText("0.04 DEV of 0.2 DEV · 0.16 DEV left", { exact: false }).waitFor();
  });

  it("a change of limits approved with the passkey holds the agent to the new rules at once", async () => {
    const { page } = person;
    await page.goto(`${app.appUrl}/clients`);
    const row = page.getByRole("listitem", { name: "Budget bot" });
    await row.getByRole("button", { name: "Edit limits for Main" }).click();
    await row.getByLabel("Spending limits for Main").selectOption({ label: "Custom" });
    // The custom form starts from the rules in force.
    assert.equal(await row.getByLabel("Per day (DEV) for Main").inputValue(), "0.2");
    await row.getByLabel("Per transaction (DEV) for Main").fill("0.01");
    await row.getByText("More rules for Main").click();
    await row.getByLabel("Allow message signing for Main").uncheck();
    await row.getByRole("button", { name: "Save limits for Main" }).click();
    await page.getByRole("status").filter({ hasText: "Limits for Main saved" }).waitFor();
    await row
      .getByText("Limits for Main: up to 0.01 DEV a transaction · 0.2 DEV a day · no message signing · refuses unlimited approvals")
      .waitFor();

    const refused = await send("0.02");
    assert.equal(refused.isError, true);
    assert.equal(refused.structuredContent?.rule, "native.per_transaction");
    assert.equal(
      refused.content?.[0]?.text,
      "Refused by the spending policy: 0.02 DEV is over your limit of 0.01 DEV a transaction for Main",
    );
    const message = (await bot.callTool({ name: "sign_message", arguments: { credential_id: mainId, message: "hi" } })) as ToolResult;
    assert.equal(message.structuredContent?.rule, "sign_message");
    assert.equal(message.content?.[0]?.text, "Refused by the spending policy: message signing is not allowed");
    const allowed = await send("0.01");
    assert.ok(!allowed.isError, allowed.content?.[0]?.text);

    const policy = (await bot.callTool({ name: "get_policy", arguments: { credential_id: mainId } })) as ToolResult;
    assert.deepEqual(policy.structuredContent?.policy, {
      native: { per_transaction: String(parseEther("0.01")), per_day: String(parseEther("0.2")) },
      sign_message: false,
      no_unlimited_approvals: true,
    });
    const changes = await db().auditEvent.count({ where: { type: "policy.changed" } });
    assert.equal(changes, 1);
  });

  it("a field that is not valid is named, and nothing is saved", async () => {
    const { page } = person;
    await page.goto(`${app.appUrl}/clients`);
    const row = page.getByRole("listitem", { name: "Budget bot" });
    await row.getByRole("button", { name: "Edit limits for Main" }).click();
    await row.getByLabel("Per week (DEV) for Main").fill("lots");
    await row.getByRole("button", { name: "Save limits for Main" }).click();
    await page.getByRole("alert").filter({ hasText: "Per week: enter an amount, like 0.05" }).waitFor();
    assert.equal(await db().auditEvent.count({ where: { type: "policy.changed" } }), 1);
  });

  it("names from the address book: saved with a passkey, offered as recipients, shown on limits and approvals", async () => {
    const { page } = person;
    await page.goto(`${app.appUrl}/settings`);
    await page.getByLabel("Contact name").fill("Alice");
    await page.getByLabel("Contact address").fill(FRIEND.toLowerCase());
    await page.getByRole("button", { name: "Save contact" }).click();
    await page.getByRole("status").filter({ hasText: "Alice saved" }).waitFor();
    await page.getByRole("listitem", { name: "Alice" }).getByText(FRIEND).waitFor();

    await page.goto(`${app.appUrl}/clients`);
    const row = page.getByRole("listitem", { name: "Budget bot" });
    await row.getByRole("button", { name: "Edit limits for Main" }).click();
    await row.getByRole("button", { name: "Allow Alice for Main" }).click();
    assert.equal(await row.getByLabel("Allowed recipients for Main").inputValue(), FRIEND);
    await row.getByRole("button", { name: "Save limits for Main" }).click();
    await page.getByRole("status").filter({ hasText: "Limits for Main saved" }).waitFor();
    await row.getByText("only to Alice", { exact: false }).waitFor();

    const request = await send("0.001");
    assert.ok(!request.isError, request.content?.[0]?.text);
    await page.goto(String(request.structuredContent?.approval_url));
    const recipient = page.getByRole("definition").filter({ hasText: FRIEND });
    assert.equal(await recipient.locator(".badge.contact").textContent(), "Alice");

    await page.goto(`${app.appUrl}/settings`);
    await page.getByRole("button", { name: "Remove Alice" }).click();
    await page.getByRole("status").filter({ hasText: "Alice removed from the address book" }).waitFor();
    assert.equal(await db().addressBookEntry.count(), 0);
    assert.deepEqual(
      (await db().auditEvent.findMany({ where: { type: { startsWith: "address_book." } }, orderBy: { seq: "asc" } })).map((event) => [
        event.type,
        JSON.parse(event.data).address,
      ]),
      [
        ["address_book.saved", FRIEND],
        ["address_book.removed", FRIEND],
      ],
    );
  });

  it("a token cap reads in the token's units with its symbol, in the limits and in what is spent today", async () => {
    const token = await deployErc20(chain, { name: "Test Token", symbol: "TST", supply: parseEther("100"), holder: mainAddress });
    const { page } = person;
    await page.goto(`${app.appUrl}/clients`);
    const row = page.getByRole("listitem", { name: "Budget bot" });
    await row.getByRole("button", { name: "Edit limits for Main" }).click();
    await row.getByText("More rules for Main").click();
    // typed in TST, its contract's units, as the page shows once the contract has answered
    await row.getByLabel("Token caps for Main").fill(`${chain.chainId} ${token} 5 10`);
    await row.getByText("caps in TST").waitFor();
    await row.getByRole("button", { name: "Save limits for Main" }).click();
    await page.getByRole("status").filter({ hasText: "Limits for Main saved" }).waitFor();
    await row.getByText("up to 5 TST a transaction, 10 TST a day", { exact: false }).waitFor();

    const transfer = (await bot.callTool({
      name: "send_transaction",
      arguments: {
        credential_id: mainId,
        chain_id: chain.chainId,
        to: token,
        value: "0",
        data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [FRIEND, parseEther("2.5")] }),
      },
    })) as ToolResult;
    assert.ok(!transfer.isError, transfer.content?.[0]?.text);
    await page.goto(`${app.appUrl}/clients`);
    const spent = row.getByRole("progressbar", { name: `Spent today of token ${token} with Main` });
    assert.equal(await spent.getAttribute("value"), "0.25");
    await row.getByText("2.5 TST of 10 TST · 7.5 TST left", { exact: false }).waitFor();
  });
});
