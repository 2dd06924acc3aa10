// The person's side of an allowance on /clients, in Chromium with a virtual passkey (PRF) against the started app on
// a hardhat chain with the Delegation Framework: what is left and each payment with its transaction; "Revoke
// allowance" has the revocation signed with it sent while the wallet holds 0 ETH; revoking the client stops its
// allowances at once, in the browser or not; an older allowance (no stored revocation) is signed for in the page.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseEther, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Browser, Page } from "playwright-core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RunningApp } from "../support/app";
import type { LocalChain } from "../support/chain";
import { connectAgent, type Person } from "../support/consent";
import { grantAllowanceFor, personWithShoppingWallet, startAllowanceApp, type AllowanceApp } from "../support/allowances";
import { db } from "@/lib/db";
import type { RequestView } from "@/contract";

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { type: string; text: string }[] };

const EXPLORER = "https://explorer.example";

describe("allowances on /clients", { timeout: 300_000 }, () => {
  let world: AllowanceApp;
  let chain: LocalChain;
  let app: RunningApp;
  let browser: Browser;
  let recipient: AllowanceApp["recipient"];
  let relayerNonce: AllowanceApp["relayerNonce"];
  let disabledOnChain: AllowanceApp["disabledOnChain"];
  let person: Person;
  let userId: string;
  const key = generatePrivateKey();
  const wallet = privateKeyToAccount(key);
  let credentialId: string;
  const clients: Client[] = [];

  before(async () => {
    ({ chain, app, browser, recipient, relayerNonce, disabledOnChain } = world = await startAllowanceApp({
      browser: true,
      explorerUrl: EXPLORER,
    }));
    ({ person, credentialId, userId } = await personWithShoppingWallet(browser, app, "payer@example.com", key));
  });
  after(async () => {
    for (const client of clients) await client.close();
    await world?.stop();
  });

  /** An agent the person connected, whose grant holds the wallet in `allowance` mode with a signed allowance. */
  async function agentWithAllowance(name: string, shop: Address) {
    const { client, provider } = await connectAgent(app, person.page, name, [{ name: "Shopping", mode: "approve" }]);
    clients.push(client);
    const grant = await db().grant.findFirstOrThrow({ where: { userId, client: { name } } });
    const { id, hashes } = await grantAllowanceFor(
      chain,
      wallet,
      { userId, credentialId, grantId: grant.id },
      { recipients: [shop], native: parseEther("0.01"), transactions: 3, overLimit: "refuse" },
    );
    return { client, provider, grantId: grant.id, allowanceId: id, hashes };
  }

  async function pay(client: Client, to: Address, ether: string) {
    return (await client.callTool({
      name: "send_transaction",
      arguments: { credential_id: credentialId, chain_id: chain.chainId, to, value: String(parseEther(ether)) },
    })) as ToolResult;
  }

  /** The page's outcome line, success or error, so that a failure says why. */
  async function outcome(page: Page, expected: RegExp) {
    // (Next.js's route announcer is an empty alert)
    const line = page.getByRole("status").or(page.getByRole("alert")).filter({ hasText: /\S/ }).first();
    await line.waitFor();
    assert.match((await line.textContent()) ?? "", expected);
  }

  /** The client's allowance on /clients (the ones of clients revoked before stay listed under their own client). */
  async function openClients(page: Page, client: string) {
    await page.goto(`${app.appUrl}/clients`);
    return page.getByRole("listitem", { name: client }).getByRole("region", { name: "Allowance of Shopping on Local dev chain" });
  }

  it("lists what is left and each payment with its transaction; Revoke allowance disables it on chain with 0 ETH", async () => {
    const shop = recipient();
    // exactly what the agent will pay: after it, the wallet holds nothing to pay any gas with
    await chain.fund(wallet.address, "0.004");
    const agent = await agentWithAllowance("Shop Agent", shop);
    let allowance = await openClients(person.page, "Shop Agent");
    await allowance.getByText(/^0\.01 ETH a day to 0x[0-9a-fA-F]{40}, for 7 days left, at most 3 payments in all\.$/).waitFor();
    await allowance.getByText("0.01 ETH left until it resets").waitFor();

    const paid = (await pay(agent.client, shop, "0.004")).structuredContent as RequestView;
    assert.equal(paid.status, "completed");
    assert.equal(await chain.client.getBalance({ address: wallet.address }), 0n);

    allowance = await openClients(person.page, "Shop Agent");
    await allowance.getByText(/0\.006 ETH left until it resets .*\. 2 payments left in all \(this count never resets\)\./).waitFor();
    const link = allowance.getByRole("link", { name: `${paid.tx_hash!.slice(0, 10)}…${paid.tx_hash!.slice(-8)}` });
    assert.equal(await link.getAttribute("href"), `${EXPLORER}/tx/${paid.tx_hash}`);
    await allowance.getByRole("cell", { name: "0.004 ETH" }).waitFor();

    await allowance.getByRole("button", { name: "Revoke allowance" }).click();
    await outcome(person.page, /Allowance disabled on chain/);
    assert.deepEqual(await disabledOnChain(agent.hashes), [true]);
    assert.equal(await chain.client.getBalance({ address: wallet.address }), 0n, "the person paid nothing");
    assert.equal((await db().allowance.findUniqueOrThrow({ where: { id: agent.allowanceId } })).status, "revoked");
    assert.equal(await db().auditEvent.count({ where: { type: "allowance.revoked", userId } }), 1);

    // The next payment is not made from it: it goes to the person, and the relayer sends nothing.
    await chain.fund(wallet.address, "0.01");
    const sent = await relayerNonce();
    const next = (await pay(agent.client, shop, "0.001")).structuredContent as RequestView;
    assert.equal(next.status, "pending");
    assert.equal(await relayerNonce(), sent);
  });

  it("revoking the client stops its allowances at once, and the same tap disables them on chain", async () => {
    const shop = recipient();
    await chain.fund(wallet.address, "0.01");
    const agent = await agentWithAllowance("Client Agent", shop);
    await openClients(person.page, "Client Agent");
    await person.page.getByRole("button", { name: "Revoke Client Agent" }).click();
    const row = person.page.getByRole("listitem", { name: "Client Agent" });
    await row.getByText("Revoked", { exact: true }).waitFor();
    assert.equal((await db().allowance.findUniqueOrThrow({ where: { id: agent.allowanceId } })).status, "revoked");
    assert.deepEqual(await disabledOnChain(agent.hashes), [true]);
    const { spendFromAllowance } = await import("@/lib/allowances/spend");
    await assert.rejects(spendFromAllowance(agent.allowanceId, { to: shop, value: 1n }), /revoked/);
  });

  it("an older allowance's client revoked without the browser: spends are refused, and /clients asks to sign the disabling", async () => {
    const shop = recipient();
    await chain.fund(wallet.address, "0.01");
    const agent = await agentWithAllowance("Token Agent", shop);
    // made before allowances carried their own signed revocation: nothing can be sent without the person's key
    await db().allowance.update({ where: { id: agent.allowanceId }, data: { revocationSignature: null } });
    // The application ends its own access (RFC 7009): no passkey, no signature of the person's.
    const { revokeToken } = await import("@/lib/oauth/revocation");
    await revokeToken(new URLSearchParams({ token: agent.provider.tokens()!.access_token, client_id: agent.provider.client!.client_id }));
    const { spendFromAllowance, AllowanceRefusal } = await import("@/lib/allowances/spend");
    const refused = await spendFromAllowance(agent.allowanceId, { to: shop, value: 1n }).catch((error: unknown) => error);
    assert.ok(refused instanceof AllowanceRefusal && refused.reason === "not_active");
    assert.deepEqual(await disabledOnChain(agent.hashes), [false], "still live on chain until the person signs");
    assert.equal(await db().auditEvent.count({ where: { type: "allowance.stopped", data: { contains: agent.allowanceId } } }), 1);

    const allowance = await openClients(person.page, "Token Agent");
    await allowance.getByText("still live on chain until you sign to disable it").waitFor();
    await allowance.getByRole("button", { name: "Revoke allowance" }).click();
    await outcome(person.page, /Allowance disabled on chain/);
    assert.deepEqual(await disabledOnChain(agent.hashes), [true]);
  });

  it("a paused allowance says why on /clients; Resume allowance, with a passkey, lets it pay again", async () => {
    const shop = recipient();
    await chain.fund(wallet.address, "0.01");
    const agent = await agentWithAllowance("Paused Agent", shop);
    // As a relayed payment that reverted on chain leaves it.
    await db().allowance.update({ where: { id: agent.allowanceId }, data: { status: "suspended", attention: "relay_reverted" } });
    let allowance = await openClients(person.page, "Paused Agent");
    await allowance.getByText("Paused", { exact: true }).waitFor();
    // the wallet's rules speak for what the allowance does not pay
    await person.page
      .getByRole("listitem", { name: "Paused Agent" })
      .getByText(/^Outside the allowance, limits for Shopping: /)
      .waitFor();
    await allowance.getByText("Paused: a transaction the relayer sent for it reverted on chain. No payment is made from it").waitFor();
    // Meanwhile the agent's payment comes to the person, and the relayer sends nothing.
    const sent = await relayerNonce();
    assert.equal(((await pay(agent.client, shop, "0.001")).structuredContent as RequestView).status, "pending");
    assert.equal(await relayerNonce(), sent);

    await allowance.getByRole("button", { name: "Resume allowance" }).click();
    await outcome(person.page, /Allowance resumed: it pays again without a tap/);
    assert.equal((await db().allowance.findUniqueOrThrow({ where: { id: agent.allowanceId } })).status, "active");
    allowance = await openClients(person.page, "Paused Agent");
    await allowance.getByText("Live", { exact: true }).waitFor();
    assert.equal(((await pay(agent.client, shop, "0.001")).structuredContent as RequestView).status, "completed");
  });
});
