// Issue 28's main path, end to end: on a hardhat chain with the Delegation Framework, a person in Chromium (virtual
// passkey with PRF) connects an MCP SDK client and, at consent, signs an allowance of 0.01 ETH and 10 of a test
// ERC-20 per day, one recipient, 3 transactions, with one passkey tap. The agent then pays within it with no browser
// action; above it the person's choice holds (ask: a pending request; refuse: a tool error in their units); a new
// period allows it again; a recipient off the list is refused before anything is sent. The page states exactly what
// is signed, and a prepared allowance the page cannot read gets no signature.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { encodeFunctionData, erc20Abi, formatEther, getAddress, parseEther, type Address, type Hex } from "viem";
import type { RunningApp } from "../support/app";
import type { LocalChain } from "../support/chain";
import { startAllowanceApp, type AllowanceApp } from "../support/allowances";
import { deployErc20 } from "../support/contracts";
import { agentAsks, connectAgent, newPerson, redirected, type Person } from "../support/consent";
import { finishAndConnect } from "../support/mcp-client";
import { fillAllowanceFields, reviewedWords, type AllowanceForm } from "../support/allowance-picker";
import { db } from "@/lib/db";
import type { RequestView } from "@/contract";

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { type: string; text: string }[] };

const DAY = 86_400;

describe("creating an allowance at consent, and spending it through MCP", { timeout: 600_000 }, () => {
  let world: AllowanceApp;
  let chain: LocalChain;
  let app: RunningApp;
  let browser: Browser;
  let recipient: AllowanceApp["recipient"];
  let relayerNonce: AllowanceApp["relayerNonce"];

  before(async () => {
    ({ chain, app, browser, recipient, relayerNonce } = world = await startAllowanceApp({ browser: true }));
  });
  after(() => world?.stop());
  const tokenBalance = (token: Address, holder: Address) =>
    chain.client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [holder] });

  /** A signed-up person whose wallet "Main" holds 1 ETH (and, when asked, 100 of a fresh test token "TT"). */
  async function personWithWallet(email: string, withToken: boolean) {
    const person = await newPerson(browser, app, email, ["Main"]);
    const main = await db().credential.findFirstOrThrow({ where: { name: "Main", user: { email } } });
    const address = getAddress(main.address);
    await chain.fund(address, "1");
    const token = withToken
      ? await deployErc20(chain, { name: "Test Token", symbol: "TT", supply: parseEther("100"), holder: address })
      : null;
    return { person, credentialId: main.id, address, token };
  }

  /** Fills in the allowance for "Main" on the consent page and asks for its review. */
  async function fillAllowance(page: Page, form: AllowanceForm) {
    await page.getByRole("checkbox", { name: "Main", exact: true }).check();
    const mode = page.getByLabel("Approval mode for Main");
    assert.equal(await mode.inputValue(), "read", "allowance is never the default");
    await mode.selectOption("allowance");
    await fillAllowanceFields(page, form);
  }

  /** The person consents with an allowance; the agent is connected with the grant. */
  async function consentWithAllowance(person: Person, form: AllowanceForm) {
    const { provider, callback } = await agentAsks(app, person.page, "Allowance Agent");
    await fillAllowance(person.page, form);
    const words = await reviewedWords(person.page);
    await person.page.getByRole("button", { name: "Approve with passkey" }).click();
    const client = await finishAndConnect(app.baseUrl, provider, (await redirected(person.page, callback)).get("code")!);
    await callback.close();
    return { client, words };
  }

  function send(client: Client, credentialId: string, to: Address, value: bigint, data?: Hex) {
    return client.callTool({
      name: "send_transaction",
      arguments: { credential_id: credentialId, chain_id: chain.chainId, to, value: String(value), ...(data ? { data } : {}) },
    }) as Promise<ToolResult>;
  }
  function view(result: ToolResult): RequestView {
    assert.notEqual(result.isError, true, result.content[0]?.text);
    return result.structuredContent as RequestView;
  }
  const transfer = (to: Address, amount: string) =>
    encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [to, parseEther(amount)] });

  it("one tap creates it as the page stated it; the agent pays twice alone, above the cap asks, a new period pays again", async () => {
    const { person, credentialId, address, token } = await personWithWallet("ask@example.com", true);
    const shop = recipient();
    const { client, words } = await consentWithAllowance(person, {
      coin: "0.01",
      token: { address: token!, amount: "10" },
      recipient: shop,
      transactions: 3,
      over: "ask",
    });

    // The grant and the allowance exist together; the words on the page are the signed fields, decoded.
    const grant = await db().grantCredential.findFirstOrThrow({ where: { credentialId } });
    assert.equal(grant.mode, "allowance");
    const allowance = await db().allowance.findFirstOrThrow({ where: { credentialId }, include: { delegations: true } });
    assert.equal(allowance.grantId, grant.grantId);
    assert.equal(allowance.overLimit, "ask");
    assert.equal(allowance.delegations.length, 2);
    const { readDelegation } = await import("@/lib/allowances/caveats");
    const { describeDelegation } = await import("@/lib/allowances/wording");
    const { parseStoredDelegation } = await import("@/lib/allowances/allowances");
    const { allowanceFramework } = await import("@/lib/wallet/chains");
    const framework = allowanceFramework(chain.chainId)!;
    const now = Math.floor(Date.now() / 1000);
    const signed = allowance.delegations.map((row) => readDelegation(framework, parseStoredDelegation(row.signed)));
    for (const meaning of signed) {
      const sentence = meaning.token
        ? `${describeDelegation(meaning, { symbol: "TT", decimals: 18 }, now)} Token contract: ${meaning.token}.`
        : describeDelegation(meaning, { symbol: "ETH", decimals: 18 }, now);
      assert.ok(words.includes(sentence), `the page said: ${sentence}\n(it said: ${words.join("\n")})`);
      assert.deepEqual(meaning.recipients, [shop]);
      assert.equal(meaning.transactions, 3);
      assert.equal(meaning.periodSeconds, DAY);
    }
    assert.match(words.join("\n"), /Up to 0\.01 ETH per day, the day starting at \d\d:\d\d UTC, to 0x/);
    assert.match(words.join("\n"), /Up to 10 TT per day/);
    assert.match(words.join("\n"), /comes to you as a request to approve/);
    assert.match(words.join("\n"), /EIP7702StatelessDeleGator/, "the first allowance on this chain also sets the account's code");
    assert.ok(
      words.includes(
        "You also sign its revocation, which Agent Wallet sends when you revoke it or its access ends; it can only disable " +
          "these 2 delegations, and Agent Wallet pays its fee.",
      ),
      words.join("\n"),
    );
    assert.match(allowance.revocationSignature ?? "", /^0x[0-9a-f]{130}$/, "the revocation signed in the same tap is stored");
    assert.ok(await db().auditEvent.findFirst({ where: { type: "allowance.created", credentialId } }), "audited");

    // Two payments of each asset, no browser action: both land.
    const urlBefore = person.page.url();
    for (let payment = 0; payment < 2; payment++) {
      assert.equal(view(await send(client, credentialId, shop, parseEther("0.004"))).status, "completed");
      assert.equal(view(await send(client, credentialId, token!, 0n, transfer(shop, "4"))).status, "completed");
    }
    assert.equal(await chain.client.getBalance({ address: shop }), parseEther("0.008"));
    assert.equal(await tokenBalance(token!, shop), parseEther("8"));
    assert.equal(await tokenBalance(token!, address), parseEther("92"));
    assert.equal(person.page.url(), urlBefore, "the person did nothing");

    // Above the cap, and a recipient off the list: the person is asked; nothing is sent.
    const sent = await relayerNonce();
    const above = view(await send(client, credentialId, shop, parseEther("0.004")));
    assert.equal(above.status, "pending");
    // The approval page says why the allowance did not pay it, and that the person's wallet pays its fee.
    await person.page.goto(above.approval_url!);
    await person.page
      .getByRole("note")
      .filter({
        hasText: new RegExp(
          "^Not paid from the allowance: 0\\.004 ETH is over your allowance of 0\\.01 ETH a day; 0\\.002 ETH left until it " +
            "resets (at|on \\d+ \\w+ at) \\d\\d:\\d\\d UTC\\. " +
            "It waits for your approval; approved, your wallet pays it and its network fee\\.$",
        ),
      })
      .waitFor();
    assert.equal(view(await send(client, credentialId, token!, 0n, transfer(shop, "4"))).status, "pending");
    assert.equal(view(await send(client, credentialId, recipient(), parseEther("0.001"))).status, "pending");
    assert.equal(await relayerNonce(), sent, "nothing was sent");

    // A new period: the third transfer of each fits again.
    await chain.client.request({ method: "evm_increaseTime" as never, params: [DAY] as never });
    await chain.client.request({ method: "evm_mine" as never, params: [] as never });
    assert.equal(view(await send(client, credentialId, shop, parseEther("0.004"))).status, "completed");
    assert.equal(view(await send(client, credentialId, token!, 0n, transfer(shop, "4"))).status, "completed");
    assert.equal(formatEther(await chain.client.getBalance({ address: shop })), "0.012");
    assert.equal(await tokenBalance(token!, shop), parseEther("12"));
    await client.close();
    await person.context.close();
  });

  it("above the cap a refuse allowance is a tool error in the person's units; off the list too, before anything is sent", async () => {
    const { person, credentialId } = await personWithWallet("refuse@example.com", false);
    const shop = recipient();
    const stranger = recipient();
    const { client } = await consentWithAllowance(person, { coin: "0.01", recipient: shop, transactions: 3, over: "refuse" });
    assert.equal(view(await send(client, credentialId, shop, parseEther("0.006"))).status, "completed");
    const sent = await relayerNonce();
    const over = await send(client, credentialId, shop, parseEther("0.006"));
    assert.equal(over.isError, true);
    // a reset on another day than today names the day
    assert.match(
      over.content[0].text,
      /^0\.006 ETH is over your allowance of 0\.01 ETH a day; 0\.004 ETH left until it resets on \d+ \w+ at \d\d:\d\d UTC\.$/,
    );
    const offList = await send(client, credentialId, stranger, parseEther("0.001"));
    assert.equal(offList.isError, true);
    assert.match(offList.content[0].text, new RegExp(`${stranger} is not among this allowance's recipients`));
    assert.equal(await relayerNonce(), sent, "nothing was sent");
    assert.equal(await chain.client.getBalance({ address: stranger }), 0n);
    await client.close();
    await person.context.close();
  });

  it("on /clients, a wallet of an existing grant takes the allowance mode with one tap; the agent then pays alone", async () => {
    const { person, credentialId } = await personWithWallet("clients@example.com", false);
    const shop = recipient();
    const { client } = await connectAgent(app, person.page, "Later Agent", [{ name: "Main", mode: "approve" }]);
    assert.equal(view(await send(client, credentialId, shop, parseEther("0.001"))).status, "pending", "approve: the person is asked");

    const { page } = person;
    await page.goto(`${app.appUrl}/clients`);
    await page.getByText("Give Main an allowance for Later Agent").click();
    await fillAllowanceFields(page, { coin: "0.01", recipient: shop, transactions: 3, over: "refuse" });
    assert.match((await reviewedWords(page)).join("\n"), /Up to 0\.01 ETH per day, the day starting at \d\d:\d\d UTC, to 0x/);
    await page.getByRole("button", { name: "Sign allowance for Main with passkey" }).click();
    await page.getByText("Main (allowance)").waitFor();

    const grant = await db().grantCredential.findFirstOrThrow({ where: { credentialId } });
    assert.equal(grant.mode, "allowance");
    assert.equal((await db().allowance.findFirstOrThrow({ where: { credentialId } })).grantId, grant.grantId);
    assert.equal(view(await send(client, credentialId, shop, parseEther("0.004"))).status, "completed");
    assert.equal(await chain.client.getBalance({ address: shop }), parseEther("0.004"));

    // A second one replaces the first: one live allowance at a time, the first disabled on chain with what it stored.
    const first = await db().allowance.findFirstOrThrow({ where: { credentialId } });
    await page.goto(`${app.appUrl}/clients`);
    await page.getByText("Give Main an allowance for Later Agent").click();
    await fillAllowanceFields(page, { coin: "0.02", recipient: shop, transactions: 3, over: "refuse" });
    assert.match((await reviewedWords(page)).join("\n"), /Up to 0\.02 ETH per day/);
    await page.getByRole("button", { name: "Sign allowance for Main with passkey" }).click();
    for (const deadline = Date.now() + 60_000; ; await new Promise((resolve) => setTimeout(resolve, 200))) {
      const replaced = await db().allowance.findUniqueOrThrow({ where: { id: first.id } });
      if (replaced.status === "revoked") break;
      const alerts = await page.getByRole("alert").allTextContents();
      assert.ok(
        Date.now() < deadline,
        `the replaced allowance is ${replaced.status}, not disabled on chain; the page says ${JSON.stringify(alerts)}; ` +
          `the server said:\n${app.output().slice(-3000)}`,
      );
    }
    const live = await db().allowance.findMany({ where: { credentialId, status: "active" } });
    assert.equal(live.length, 1);
    assert.notEqual(live[0].id, first.id);
    await client.close();
    await person.context.close();
  });

  it("a prepared allowance the page cannot read gets no signature, and no grant or allowance exists without one", async () => {
    const { person, credentialId } = await personWithWallet("tamper@example.com", false);
    const { page } = person;
    await agentAsks(app, page, "Tampered Agent");
    const requestId = new URL(page.url()).searchParams.get("request")!;

    const posted: string[] = [];
    page.on("request", (request) => {
      if (request.method() === "POST") posted.push(new URL(request.url()).pathname);
    });
    const tamper = async (change: (prepared: { delegations: { caveats: { enforcer: string }[] }[] }) => void) => {
      await page.unroute("**/api/allowances/prepare");
      await page.route("**/api/allowances/prepare", async (route) => {
        const response = await route.fetch();
        const prepared = await response.json();
        change(prepared);
        await route.fulfill({ response, json: prepared });
      });
    };

    await tamper((prepared) => {
      prepared.delegations[0].caveats[0].enforcer = "0x000000000000000000000000000000000000dEaD";
    });
    await fillAllowance(page, { coin: "0.01", recipient: recipient(), transactions: 3, over: "ask" });
    await page
      .getByRole("alert")
      .filter({ hasText: /Nothing will be signed: Unknown caveat enforcer 0x0+dEaD: refused/ })
      .waitFor();
    assert.equal(await page.getByRole("region", { name: "Allowance you sign for Main" }).count(), 0);
    await page.getByRole("button", { name: "Approve with passkey" }).click();
    await page.getByRole("alert").filter({ hasText: "Review the allowance first" }).waitFor();

    await tamper((prepared) => {
      prepared.delegations[0].caveats = [];
    });
    await page.getByRole("button", { name: "Review allowance for Main" }).click();
    await page
      .getByRole("alert")
      .filter({ hasText: /without caveats would allow anything/ })
      .waitFor();
    await page.getByRole("button", { name: "Approve with passkey" }).click();
    await page.getByRole("alert").filter({ hasText: "Review the allowance first" }).waitFor();
    assert.deepEqual(
      posted.filter((path) => path.startsWith("/api/consent/")),
      [],
      "no passkey approval was asked for, nothing was signed or sent",
    );

    // Without the signed allowance, the mode is refused outright: a session alone cannot create one.
    const answer = await page.evaluate(
      async ({ requestId, credentialId }) => {
        const response = await fetch(`/api/consent/${requestId}/options`, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ credentials: [{ credentialId, mode: "allowance" }], stayConnected: false }),
        });
        return { status: response.status, body: await response.text() };
      },
      { requestId, credentialId },
    );
    assert.equal(answer.status, 400);
    assert.match(answer.body, /the allowance mode comes with the allowance the person signed/);
    assert.equal(await db().allowance.count({ where: { credentialId } }), 0);
    assert.equal(await db().grantCredential.count({ where: { credentialId } }), 0);
    await person.context.close();
  });
});
