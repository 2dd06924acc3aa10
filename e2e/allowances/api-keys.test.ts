// Issue 28 for personal API keys, end to end: on a hardhat chain with the Delegation Framework, a person in Chromium
// (virtual passkey with PRF) creates a `svc_live_` key on /clients whose wallet is in `allowance` mode, with one
// passkey tap that approves the key and signs the allowance. A script holding the key then pays inside the allowance
// through the MCP SDK client with no browser action, and above it the person's choice holds. If the relay fails,
// nothing is issued. A key issued in `approve` mode takes an allowance later ("Give Main an allowance for <key>").
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { parseEther, type Address } from "viem";
import type { RunningApp } from "../support/app";
import type { LocalChain } from "../support/chain";
import { startAllowanceApp, type AllowanceApp } from "../support/allowances";
import { newPerson } from "../support/consent";
import { connectWithBearer } from "../support/mcp-client";
import { fillAllowanceFields, reviewedWords, type AllowanceForm } from "../support/allowance-picker";
import { db } from "@/lib/db";
import type { RequestView } from "@/contract";

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { type: string; text: string }[] };

describe("a personal API key with an allowance", { timeout: 600_000 }, () => {
  let world: AllowanceApp;
  let chain: LocalChain;
  let app: RunningApp;
  let browser: Browser;
  let recipient: AllowanceApp["recipient"];
  let relayer: Address;
  let relayerNonce: AllowanceApp["relayerNonce"];
  const clients: Client[] = [];

  before(async () => {
    ({ chain, app, browser, recipient, relayer, relayerNonce } = world = await startAllowanceApp({ browser: true }));
  });
  after(async () => {
    for (const client of clients) await client.close();
    await world?.stop();
  });

  /** A signed-up person on /clients whose wallet "Main" holds 1 ETH. */
  async function personWithWallet(email: string) {
    const person = await newPerson(browser, app, email, ["Main"]);
    const main = await db().credential.findFirstOrThrow({ where: { name: "Main", user: { email } } });
    await chain.fund(main.address, "1");
    await person.page.goto(`${app.appUrl}/clients`);
    return { person, credentialId: main.id };
  }

  /** Fills in the "New API key" form with "Main" in `mode` (and its allowance, reviewed), without submitting it. */
  async function fillKeyForm(page: Page, name: string, mode: "approve" | { allowance: AllowanceForm }) {
    const form = page.getByRole("form", { name: "New API key" });
    await form.getByLabel("Key name").fill(name);
    await form.getByRole("checkbox", { name: "Main", exact: true }).check();
    const select = form.getByLabel("Approval mode for Main");
    assert.equal(await select.inputValue(), "read", "allowance is never the default");
    if (mode === "approve") {
      await select.selectOption("approve");
      return { form, words: [] };
    }
    await select.selectOption("allowance");
    await fillAllowanceFields(form, mode.allowance);
    return { form, words: await reviewedWords(form) };
  }

  /** The key the form shows once. */
  async function createdKey(page: Page): Promise<string> {
    const key = (await page.getByTestId("new-api-key").textContent())!.trim();
    assert.match(key, /^svc_live_[0-9A-Za-z]{43}$/);
    return key;
  }

  async function agentWith(key: string) {
    const client = await connectWithBearer(app.baseUrl, key);
    clients.push(client);
    return client;
  }

  function pay(client: Client, credentialId: string, to: Address, ether: string) {
    return client.callTool({
      name: "send_transaction",
      arguments: { credential_id: credentialId, chain_id: chain.chainId, to, value: String(parseEther(ether)) },
    }) as Promise<ToolResult>;
  }
  function view(result: ToolResult): RequestView {
    assert.notEqual(result.isError, true, result.content[0]?.text);
    return result.structuredContent as RequestView;
  }
  /** A payment the tool answered `completed`, and whose transaction landed. */
  async function landed(result: ToolResult) {
    const request = view(result);
    assert.equal(request.status, "completed");
    assert.match(request.tx_hash ?? "", /^0x[0-9a-f]{64}$/);
    const receipt = await chain.client.getTransactionReceipt({ hash: request.tx_hash as `0x${string}` });
    assert.equal(receipt.status, "success");
  }

  it("one tap issues the key with its allowance; the script with the key pays inside it alone, above it the person is asked", async () => {
    const { person, credentialId } = await personWithWallet("key@example.com");
    const { page } = person;
    const shop = recipient();
    const posted: string[] = [];
    page.on("request", (request) => {
      if (request.method() === "POST") posted.push(new URL(request.url()).pathname);
    });
    const { words } = await fillKeyForm(page, "Pay bot", {
      allowance: { coin: "0.01", recipient: shop, transactions: 3, over: "ask" },
    });
    assert.match(words.join("\n"), /Up to 0\.01 ETH per day, the day starting at \d\d:\d\d UTC, to 0x/);
    assert.match(words.join("\n"), /comes to you as a request to approve/);
    await page.getByRole("button", { name: "Create API key" }).click();
    const key = await createdKey(page);
    assert.deepEqual(
      posted.filter((path) => path.startsWith("/api/api-keys")),
      ["/api/api-keys/options", "/api/api-keys"],
      "one passkey approval, for the key and its allowance together",
    );

    // The key, its grant and the allowance exist together; the list shows the mode and the allowance.
    const grant = await db().grantCredential.findFirstOrThrow({
      where: { credentialId },
      include: { grant: { include: { client: true } } },
    });
    assert.equal(grant.grant.client.kind, "api_key");
    assert.equal(grant.grant.client.name, "Pay bot");
    assert.equal(grant.mode, "allowance");
    const allowance = await db().allowance.findFirstOrThrow({ where: { credentialId } });
    assert.equal(allowance.grantId, grant.grantId);
    assert.equal(allowance.overLimit, "ask");
    assert.ok(await db().auditEvent.findFirst({ where: { type: "allowance.created", credentialId } }), "audited");
    await page.getByRole("listitem", { name: "Pay bot" }).getByText("Main (allowance)").waitFor();

    // The script pays twice with the key as its bearer: both land, the person does nothing.
    const agent = await agentWith(key);
    const urlBefore = page.url();
    await landed(await pay(agent, credentialId, shop, "0.004"));
    await landed(await pay(agent, credentialId, shop, "0.004"));
    assert.equal(await chain.client.getBalance({ address: shop }), parseEther("0.008"));
    assert.equal(page.url(), urlBefore, "the person did nothing");

    // Above the allowance: the person chose to be asked; nothing is sent.
    const sent = await relayerNonce();
    assert.equal(view(await pay(agent, credentialId, shop, "0.004")).status, "pending");
    assert.equal(await relayerNonce(), sent, "nothing was sent");
    assert.equal(await chain.client.getBalance({ address: shop }), parseEther("0.008"));
    await person.context.close();
  });

  it("when the relay fails, no key, grant or allowance is issued; the same form then issues them", async () => {
    const { person, credentialId } = await personWithWallet("relay@example.com");
    const { page } = person;
    const { form } = await fillKeyForm(page, "Unlucky bot", {
      allowance: { coin: "0.01", recipient: recipient(), transactions: 3, over: "refuse" },
    });
    // The wallet's first allowance on this chain needs the relayer to set its code: with no coin, it cannot.
    const funds = await chain.client.getBalance({ address: relayer });
    const setRelayerBalance = (wei: bigint) =>
      chain.client.request({ method: "hardhat_setBalance" as never, params: [relayer, `0x${wei.toString(16)}`] as never });
    await setRelayerBalance(0n);
    try {
      await page.getByRole("button", { name: "Create API key" }).click();
      await form
        .getByRole("alert")
        .filter({ hasText: /^The relayer could not send the transaction that lets .+ enforce the allowance .*Nothing was created/ })
        .waitFor();
    } finally {
      await setRelayerBalance(funds);
    }
    assert.equal(await page.getByTestId("new-api-key").count(), 0);
    assert.equal(await db().client.count({ where: { name: "Unlucky bot" } }), 0);
    assert.equal(await db().grantCredential.count({ where: { credentialId } }), 0);
    assert.equal(await db().allowance.count({ where: { credentialId } }), 0);

    await page.getByRole("button", { name: "Create API key" }).click();
    await createdKey(page);
    assert.equal((await db().grantCredential.findFirstOrThrow({ where: { credentialId } })).mode, "allowance");
    assert.equal(await db().allowance.count({ where: { credentialId } }), 1);
    await person.context.close();
  });

  it("a key issued in approve mode takes an allowance on /clients; the script then pays alone, and above it is refused", async () => {
    const { person, credentialId } = await personWithWallet("later@example.com");
    const { page } = person;
    const shop = recipient();
    await fillKeyForm(page, "Later bot", "approve");
    await page.getByRole("button", { name: "Create API key" }).click();
    const agent = await agentWith(await createdKey(page));
    assert.equal(view(await pay(agent, credentialId, shop, "0.001")).status, "pending", "approve: the person is asked");

    const row = page.getByRole("listitem", { name: "Later bot" });
    await row.getByText("Give Main an allowance for Later bot").click();
    await fillAllowanceFields(row, { coin: "0.01", recipient: shop, transactions: 3, over: "refuse" });
    assert.match((await reviewedWords(row)).join("\n"), /Up to 0\.01 ETH per day/);
    await row.getByRole("button", { name: "Sign allowance for Main with passkey" }).click();
    await row.getByText("Main (allowance)").waitFor();

    await landed(await pay(agent, credentialId, shop, "0.004"));
    assert.equal(await chain.client.getBalance({ address: shop }), parseEther("0.004"));
    const over = await pay(agent, credentialId, shop, "0.007");
    assert.equal(over.isError, true);
    assert.match(
      over.content[0].text,
      /^0\.007 ETH is over your allowance of 0\.01 ETH a day; 0\.006 ETH left until it resets (at|on \d+ \w+ at) \d\d:\d\d UTC\.$/,
    );
    await person.context.close();
  });
});
