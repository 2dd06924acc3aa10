import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { parseEther, recoverTypedDataAddress, verifyMessage } from "viem";
import { startApp, type RunningApp } from "../support/app";
import { launchBrowser } from "../support/browser";
import { chainsSetting, startChain, type LocalChain } from "../support/chain";
import { connectAgent, newPerson, type Person } from "../support/consent";
import { connectWithBearer } from "../support/mcp-client";
import { db } from "@/lib/db";
import { resolveBearer } from "@/lib/oauth/bearer";
import { getRequest } from "@/lib/wallet/requests";
import type { RequestView } from "@/contract";
import { orderTypedData } from "../support/fixtures";

type ToolResult = { isError?: boolean; structuredContent?: unknown; content?: { type: string; text?: string }[] };

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}
async function view(client: Client, name: string, args: Record<string, unknown>): Promise<RequestView> {
  const result = await call(client, name, args);
  assert.ok(!result.isError, `${name} failed: ${result.content?.[0]?.text}`);
  return result.structuredContent as RequestView;
}
function errorText(result: ToolResult): string {
  assert.equal(result.isError, true, "expected a tool error");
  return result.content?.[0]?.text ?? "";
}

/** The person opens the approval link and approves with their passkey. */
async function approveInBrowser(page: Page, request: RequestView) {
  await page.goto(request.approval_url);
  await page.getByRole("button", { name: "Approve with passkey" }).click();
  await page.getByRole("status").waitFor();
}

const TYPED_DATA = orderTypedData("Agent Wallet Test", "two coffees");

/** The approval page's details: every field of what is signed, apart from the one-sentence summary. */
const details = (page: Page) => page.getByRole("region", { name: "Details" });

describe("agent requests approved with a passkey, signed in the browser", { timeout: 300_000 }, () => {
  let chain: LocalChain;
  let app: RunningApp;
  let browser: Browser;
  let person: Person;
  let agent: Client;
  let accessToken: string;
  const ids: Record<string, string> = {};
  const importedKey = generatePrivateKey();
  const importedAddress = privateKeyToAccount(importedKey).address;

  before(async () => {
    chain = await startChain();
    app = await startApp({ env: { CHAINS: chainsSetting(chain) } });
    browser = await launchBrowser();
    person = await newPerson(browser, app, "signer@example.com", ["Main", "Other"]);
    const { page } = person;
    await page.getByLabel("Imported wallet name").fill("Imported");
    await page.getByLabel("Private key").fill(importedKey);
    await page.getByRole("button", { name: "Import wallet" }).click();
    await page.getByRole("status").filter({ hasText: "Imported" }).waitFor();
    await page.getByLabel("Watch-only name").fill("Watched");
    await page.getByLabel("Address").fill(privateKeyToAccount(generatePrivateKey()).address);
    await page.getByRole("button", { name: "Add watch-only address" }).click();
    await page.getByRole("status").filter({ hasText: "Watched" }).waitFor();
    for (const credential of await db().credential.findMany()) ids[credential.name] = credential.id;
    const main = await db().credential.findUniqueOrThrow({ where: { id: ids.Main } });
    await chain.fund(main.address, "10");
    await chain.fund(importedAddress, "10");

    const connected = await connectAgent(app, page, "Trading Agent", [
      { name: "Main", mode: "approve" },
      // Its agent signs typed data that is no permit, which refusing unlimited approvals refuses unread.
      { name: "Imported", mode: "approve", unlimitedApprovals: "allow" },
      { name: "Watched", mode: "read" },
    ]);
    agent = connected.client;
    accessToken = connected.provider.tokens()!.access_token;
  });
  after(async () => {
    await agent?.close().catch(() => {});
    await browser?.close();
    await app?.stop();
    await chain?.stop();
  });

  it("lists the granted credentials and reads a balance from the chain", async () => {
    const { credentials } = (await call(agent, "list_credentials", {})).structuredContent as {
      credentials: { name: string; mode: string }[];
    };
    assert.deepEqual(credentials.map(({ name, mode }) => `${name}:${mode}`).sort(), ["Imported:approve", "Main:approve", "Watched:read"]);
    const balance = (await call(agent, "get_balance", { credential_id: ids.Main, chain_id: 31337 })).structuredContent as {
      wei: string;
      formatted: string;
      symbol: string;
    };
    assert.equal(balance.wei, parseEther("10").toString());
    assert.equal(balance.formatted, "10");
    assert.equal(balance.symbol, "ETH");
    assert.match(errorText(await call(agent, "get_balance", { credential_id: ids.Main, chain_id: 1 })), /Chain 1 is not configured/);
  });

  it("sends 0.01 ETH: the person approves, the recipient gets exactly that, get_request reports the hash", async () => {
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    const before = await chain.client.getBalance({ address: recipient });
    const request = await view(agent, "send_transaction", {
      credential_id: ids.Main,
      chain_id: 31337,
      to: recipient,
      value: parseEther("0.01").toString(),
    });
    assert.equal(request.status, "pending");
    assert.equal(request.approval_url, `${app.appUrl}/approvals/${request.request_id}`);

    await person.page.goto(request.approval_url);
    await details(person.page).getByText("0.01 ETH").waitFor();
    await details(person.page).getByText(recipient).waitFor();
    await details(person.page).getByText("Local dev chain (31337)").waitFor();
    await person.page.getByRole("button", { name: "Approve with passkey" }).click();
    await person.page.getByRole("status").filter({ hasText: "Approved and sent" }).waitFor();

    const done = await view(agent, "get_request", { request_id: request.request_id });
    assert.equal(done.status, "completed");
    assert.match(done.tx_hash!, /^0x[0-9a-f]{64}$/);
    assert.equal((await chain.client.getBalance({ address: recipient })) - before, parseEther("0.01"));
    const receipt = await chain.client.getTransactionReceipt({ hash: done.tx_hash as `0x${string}` });
    assert.equal(receipt.status, "success");
    const transitions = await db().auditEvent.findMany({
      where: { requestId: request.request_id, type: "request.transition" },
      orderBy: { seq: "asc" },
    });
    assert.deepEqual(
      transitions.map((event) => JSON.parse(event.data).to),
      ["pending", "approved", "submitted", "completed"],
    );
  });

  it("sign_message waits for the decision (with progress) and returns a signature viem verifies", async () => {
    const progress: number[] = [];
    const waiting = agent.callTool(
      { name: "sign_message", arguments: { credential_id: ids.Main, message: "Pay invoice #42", wait_seconds: 45 } },
      undefined,
      { onprogress: (update) => progress.push(update.progress), timeout: 60_000 },
    );
    const pending = await (async () => {
      for (;;) {
        const row = await db().agentRequest.findFirst({ where: { kind: "sign_message", status: "pending" } });
        if (row) return row;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await person.page.goto(`${app.appUrl}/approvals/${pending.id}`);
    await details(person.page).getByText("Pay invoice #42").waitFor();
    await person.page.getByRole("button", { name: "Approve with passkey" }).click();
    const result = (await waiting) as ToolResult;
    const done = result.structuredContent as RequestView;
    assert.equal(done.status, "completed");
    const main = await db().credential.findUniqueOrThrow({ where: { id: ids.Main } });
    assert.equal(
      await verifyMessage({
        address: main.address as `0x${string}`,
        message: "Pay invoice #42",
        signature: done.signature as `0x${string}`,
      }),
      true,
    );
    assert.ok(progress.length >= 1, "progress notifications arrived while waiting");
  });

  it("sign_typed_data shows the domain and fields, and the signature recovers to the wallet", async () => {
    const request = await view(agent, "sign_typed_data", { credential_id: ids.Imported, typed_data: TYPED_DATA });
    await person.page.goto(request.approval_url);
    await details(person.page).getByText("Agent Wallet Test", { exact: true }).waitFor();
    await details(person.page).getByText("two coffees").waitFor();
    await person.page.getByRole("button", { name: "Approve with passkey" }).click();
    await person.page.getByRole("status").waitFor();
    const done = await view(agent, "get_request", { request_id: request.request_id, wait_seconds: 5 });
    assert.equal(done.status, "completed");
    const { EIP712Domain: _omit, ...types } = TYPED_DATA.types;
    const signer = await recoverTypedDataAddress({ ...TYPED_DATA, types, signature: done.signature as `0x${string}` } as Parameters<
      typeof recoverTypedDataAddress
    >[0]);
    assert.equal(signer, importedAddress);
  });

  it("Reject needs no passkey and the agent learns it", async () => {
    const request = await view(agent, "sign_message", { credential_id: ids.Main, message: "Drain everything" });
    await person.page.goto(request.approval_url);
    await person.page.getByRole("button", { name: "Reject" }).click();
    await person.page.getByRole("status").filter({ hasText: "Rejected" }).waitFor();
    const done = await view(agent, "get_request", { request_id: request.request_id });
    assert.equal(done.status, "rejected");
    assert.equal(done.signature, null);
  });

  it("a request not decided within 10 minutes expires (injectable clock)", async () => {
    const request = await view(agent, "sign_message", { credential_id: ids.Main, message: "Later" });
    const caller = await resolveBearer(`Bearer ${accessToken}`);
    const inNineMinutes = await getRequest(caller, request.request_id, () => new Date(Date.now() + 9 * 60_000));
    assert.equal(inNineMinutes.status, "pending");
    const inElevenMinutes = await getRequest(caller, request.request_id, () => new Date(Date.now() + 11 * 60_000));
    assert.equal(inElevenMinutes.status, "expired");
    assert.equal((await view(agent, "get_request", { request_id: request.request_id })).status, "expired");
    await person.page.goto(request.approval_url);
    await person.page.getByText("expired", { exact: true }).waitFor();
    assert.equal(await person.page.getByRole("button", { name: "Approve with passkey" }).count(), 0);
  });

  it("cancel_request cancels a pending request, once", async () => {
    const request = await view(agent, "sign_message", { credential_id: ids.Main, message: "Never mind" });
    assert.equal((await view(agent, "cancel_request", { request_id: request.request_id })).status, "cancelled");
    assert.match(errorText(await call(agent, "cancel_request", { request_id: request.request_id })), /is cancelled/);
    const listed = (await call(agent, "list_requests", { status: "cancelled" })).structuredContent as { requests: RequestView[] };
    assert.ok(listed.requests.some((entry) => entry.request_id === request.request_id));
    // The person can no longer approve it.
    const options = await person.page.request.post(`${app.appUrl}/api/approvals/${request.request_id}/options`, {
      data: {},
      headers: { Origin: app.appUrl },
    });
    assert.equal(options.status(), 409);
  });

  it("refuses a sensitive tool on a read credential and on a credential outside the grant", async () => {
    const before = await db().agentRequest.count();
    assert.match(errorText(await call(agent, "sign_message", { credential_id: ids.Watched, message: "hi" })), /read-only/);
    assert.match(errorText(await call(agent, "sign_message", { credential_id: ids.Other, message: "hi" })), /not in this client's grant/);
    assert.match(errorText(await call(agent, "get_balance", { credential_id: ids.Other, chain_id: 31337 })), /not in this client's grant/);
    assert.equal(await db().agentRequest.count(), before, "no request was created");
    const { credentials } = (await call(agent, "list_credentials", {})).structuredContent as { credentials: { id: string }[] };
    assert.ok(!credentials.some((credential) => credential.id === ids.Other));
  });

  it("refuses a tampered signature and a tampered transaction posted to the approval route, and a second approval", async () => {
    const { page } = person;
    // A tampered message signature: the browser's post is altered on its way.
    const message = await view(agent, "sign_message", { credential_id: ids.Imported, message: "Exactly this" });
    const forged = await privateKeyToAccount(importedKey).signMessage({ message: "Something else" });
    await page.route(`**/api/approvals/${message.request_id}/approve`, async (route) => {
      const body = JSON.parse(route.request().postData()!);
      await route.continue({ postData: JSON.stringify({ ...body, signature: forged }) });
    });
    await page.goto(message.approval_url);
    await page.getByRole("button", { name: "Approve with passkey" }).click();
    await page.getByRole("alert").filter({ hasText: "not made by this wallet's key over the requested payload" }).waitFor();
    assert.equal((await view(agent, "get_request", { request_id: message.request_id })).status, "pending");
    await page.unroute(`**/api/approvals/${message.request_id}/approve`);

    // A transaction signed by the right key but with a different value.
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    const transfer = await view(agent, "send_transaction", { credential_id: ids.Imported, chain_id: 31337, to: recipient, value: "1000" });
    await page.route(`**/api/approvals/${transfer.request_id}/approve`, async (route) => {
      // The nonce was fixed when the approval started: read what the passkey approved, then alter its value.
      const stored = JSON.parse((await db().agentRequest.findUniqueOrThrow({ where: { id: transfer.request_id } })).payload).transaction;
      const altered = await privateKeyToAccount(importedKey).signTransaction({
        type: "eip1559",
        chainId: stored.chainId,
        to: stored.to,
        value: parseEther("5"),
        data: stored.data,
        nonce: stored.nonce,
        gas: BigInt(stored.gas),
        maxFeePerGas: BigInt(stored.maxFeePerGas),
        maxPriorityFeePerGas: BigInt(stored.maxPriorityFeePerGas),
      });
      const body = JSON.parse(route.request().postData()!);
      await route.continue({ postData: JSON.stringify({ ...body, signature: altered }) });
    });
    await page.goto(transfer.approval_url);
    await page.getByRole("button", { name: "Approve with passkey" }).click();
    await page.getByRole("alert").filter({ hasText: "value differs from the prepared one" }).waitFor();
    await page.unroute(`**/api/approvals/${transfer.request_id}/approve`);
    assert.equal(await chain.client.getBalance({ address: recipient }), 0n, "nothing was broadcast");

    // Approve it for real, then replay the approval: refused, and it never runs twice.
    let approvalBody = "";
    page.on("request", (request) => {
      if (request.url().endsWith(`/api/approvals/${transfer.request_id}/approve`)) approvalBody = request.postData() ?? "";
    });
    await approveInBrowser(page, transfer);
    assert.equal((await view(agent, "get_request", { request_id: transfer.request_id })).status, "completed");
    const replay = await page.request.post(`${app.appUrl}/api/approvals/${transfer.request_id}/approve`, {
      data: JSON.parse(approvalBody),
      headers: { Origin: app.appUrl },
    });
    assert.equal(replay.status(), 409);
    assert.equal(await chain.client.getBalance({ address: recipient }), 1000n, "sent exactly once");
  });

  it("the Approvals screen shows new requests without a reload", async () => {
    const { page } = person;
    await page.goto(`${app.appUrl}/approvals`);
    await page.getByRole("heading", { name: /Waiting for you/ }).waitFor();
    await view(agent, "sign_message", { credential_id: ids.Main, message: "Fresh request 7f3a" });
    await page.getByText("Fresh request 7f3a").waitFor({ timeout: 10_000 });
  });

  it("an API-key client does the same: asks, the person approves, it gets the signature", async () => {
    const { page } = person;
    await page.goto(`${app.appUrl}/clients`);
    await page.getByLabel("Key name").fill("Deploy bot");
    await page.getByRole("checkbox", { name: "Main", exact: true }).check();
    await page.getByLabel("Approval mode for Main").selectOption("approve");
    await page.getByRole("button", { name: "Create API key" }).click();
    const key = (await page.getByTestId("new-api-key").textContent())!.trim();
    const bot = await connectWithBearer(app.baseUrl, key);
    const request = await view(bot, "sign_message", { credential_id: ids.Main, message: "Deploy v2" });
    await approveInBrowser(page, request);
    const done = await view(bot, "get_request", { request_id: request.request_id });
    assert.equal(done.status, "completed");
    const main = await db().credential.findUniqueOrThrow({ where: { id: ids.Main } });
    assert.equal(
      await verifyMessage({ address: main.address as `0x${string}`, message: "Deploy v2", signature: done.signature as `0x${string}` }),
      true,
    );
    // The bot sees only its own grant's requests.
    const { requests } = (await call(bot, "list_requests", {})).structuredContent as { requests: RequestView[] };
    assert.deepEqual(
      requests.map((entry) => entry.request_id),
      [request.request_id],
    );
    await bot.close();
  });

  it("revoking the client ends its pending requests: nothing is left to approve", async () => {
    const { page } = person;
    const request = await view(agent, "sign_message", { credential_id: ids.Main, message: "Approve me later" });
    await page.goto(`${app.appUrl}/clients`);
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Revoke Trading Agent" }).click();
    await page.getByRole("listitem", { name: "Trading Agent" }).getByText("Revoked", { exact: true }).waitFor();
    const row = await db().agentRequest.findUniqueOrThrow({ where: { id: request.request_id } });
    assert.equal(row.status, "cancelled");
    assert.equal(row.reason, "You revoked this client's access");
    await page.goto(request.approval_url);
    await page.getByText("cancelled", { exact: true }).waitFor();
    assert.equal(await page.getByRole("button", { name: "Approve with passkey" }).count(), 0);
  });
});
