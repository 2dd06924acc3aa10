// pay_x402 outside an allowance, with real parts: a person who signed up in Chromium with a virtual passkey holds
// Circle's USDC on a local chain; their agent (the MCP SDK client, an `approve` grant) hands pay_x402 the requirement of
// a resource built with the real `@x402/express` asking for eip3009, and gets a pending request; the person approves
// "Pay 0.01 USDC to … for …" with one tap, get_request answers the payment, the real `@x402/evm` facilitator settles it
// and the resource answers 200. The SDK's payingFetch and callPaidTool (a paid MCP tool built with the MCP SDK) wait
// for the tap by themselves. An `allowance` credential whose allowance does not cover the payment gets the same one
// tap, the page saying why. A resource asking for permit2 (Uniswap's Permit2 and x402's proxy on the chain) is refused
// until the person has let Permit2 take the amount, then paid with the same tap. A rejected payment leaves nothing
// signed; erc7710-only offers are refused, naming why, before any request exists.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { encodeFunctionData, erc20Abi, parseAbi, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { FacilitatorClient } from "@x402/core/server";
import { mintFiatToken } from "../support/contracts";
import { deployFiatToken } from "@/test-chain/fiat-token";
import { deployPermit2 } from "../support/permit2";
import { checkScreen, overflow, VIEWPORTS } from "../support/screens";
import { signingAgent } from "../support/signing-agent";
import { startEip3009Facilitator } from "../support/x402-eip3009";
import { startPaidResource, type PaidResource } from "../support/x402-resource";
import { paidToolClient, startPaidMcpTool } from "../support/x402-mcp-tool";
import { AgentWalletClient, callPaidTool, payingFetch } from "agent-wallet/sdk";
import { db } from "@/lib/db";
import { PERMIT2, X402_EXACT_PERMIT2_PROXY } from "@/lib/wallet/permits";
import type { RequestView, ToolOutput } from "@/contract";

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { type: string; text: string }[] };

const PRICE = 10_000n;
const balanceAbi = parseAbi(["function balanceOf(address) view returns (uint256)"]);

describe("x402 payments with one tap (eip3009)", { timeout: 300_000 }, () => {
  const suite = signingAgent({ email: "x402-payer@example.com", agentName: "Paying Agent" });
  let token: Address;
  let facilitator: FacilitatorClient;
  const resources: PaidResource[] = [];

  before(async () => {
    token = (await deployFiatToken(suite.chain)).address;
    await mintFiatToken(suite.chain, token, suite.wallet.address, 1_000_000n);
    facilitator = await startEip3009Facilitator(suite.chain);
  });
  after(async () => {
    for (const resource of resources) await resource.close();
  });

  const balanceOf = (address: Address) =>
    suite.chain.client.readContract({ address: token, abi: balanceAbi, functionName: "balanceOf", args: [address] });

  /** A resource selling a report for 0.01 USDC to a new payee, and the PAYMENT-REQUIRED its first answer carries. */
  async function paidResource(description: string, transfer: "eip3009" | "permit2" = "eip3009") {
    const payee = privateKeyToAccount(generatePrivateKey()).address;
    const resource = await startPaidResource({
      facilitator,
      transfer,
      chainId: suite.chain.chainId,
      token,
      payTo: payee,
      amount: PRICE,
      description,
    });
    resources.push(resource);
    const unpaid = await fetch(resource.url);
    assert.equal(unpaid.status, 402);
    return { resource, payee, required: unpaid.headers.get("payment-required")! };
  }

  const pay = async (required: unknown) =>
    (await suite.agent.callTool({
      name: "pay_x402",
      arguments: { credential_id: suite.wallet.id, payment_required: required },
    })) as ToolResult;

  async function getRequest(requestId: string): Promise<RequestView> {
    const result = (await suite.agent.callTool({ name: "get_request", arguments: { request_id: requestId } })) as ToolResult;
    assert.notEqual(result.isError, true, result.content[0]?.text);
    return result.structuredContent as RequestView;
  }

  /** The payment's request as pay_x402 answers it: pending, no header yet. */
  async function pendingPayment(required: string) {
    const result = await pay(required);
    assert.notEqual(result.isError, true, result.content[0]?.text);
    const pending = result.structuredContent as ToolOutput<"pay_x402">;
    assert.equal(pending.header, null);
    assert.equal(pending.value, null);
    assert.equal(pending.allowance_id, null);
    assert.ok(pending.request_id && pending.approval_url);
    assert.equal(pending.paid.formatted, "0.01");
    assert.equal(pending.paid.symbol, "USDC");
    return pending as ToolOutput<"pay_x402"> & { request_id: string; approval_url: string };
  }

  it("the person approves “Pay 0.01 USDC to … for …” with one tap; the resource answers 200 and the payee holds the USDC", async () => {
    const { resource, payee, required } = await paidResource("Today's weather report");
    const pending = await pendingPayment(required);
    assert.equal(pending.payee, payee);
    assert.deepEqual(pending.resource, { url: resource.url, description: "Today's weather report" });

    const { page } = suite.person;
    const before = await balanceOf(suite.wallet.address);
    for (const viewport of VIEWPORTS) {
      await page.setViewportSize(viewport);
      await page.goto(pending.approval_url);
      // What is shown is what is signed: the authorization's amount in USDC's units and its recipient, and what it pays for.
      const headline = `Pay 0.01 USDC to ${payee.slice(0, 6)}…${payee.slice(-4)} for ${resource.url}`;
      await page.getByText(headline, { exact: true }).waitFor();
      await page.getByRole("heading", { name: "Pay for a resource", level: 1 }).waitFor();
      await page.getByText("The resource describes itself as: “Today's weather report”", { exact: true }).waitFor();
      const details = page.getByRole("region", { name: "Details" });
      // the resource as the merchant's claim: its host apart from its path
      assert.equal(await details.locator(".resource-host").textContent(), new URL(resource.url).host);
      assert.equal(await details.locator(".resource-path").textContent(), new URL(resource.url).pathname);
      await details.getByText("“Today's weather report”", { exact: true }).waitFor();
      assert.ok((await details.getByText(`0.01 USDC (raw integer ${PRICE})`).count()) > 0, "the signed value, in USDC");
      assert.ok((await details.getByText(payee).count()) > 0, "the payee in full");
      assert.deepEqual(await checkScreen(page, `x402-one-tap-${viewport.name}`), []);
      assert.equal(await overflow(page), 0, "nothing scrolls sideways");
    }
    await page.getByRole("button", { name: "Approve with passkey" }).click();
    await page.getByRole("status").waitFor();

    const done = await getRequest(pending.request_id);
    assert.equal(done.status, "completed");
    assert.ok(done.signature);
    assert.equal(done.payment?.header, "PAYMENT-SIGNATURE");
    // Counted against the grant's policy as the token transfer it is.
    const row = await db().agentRequest.findUniqueOrThrow({ where: { id: pending.request_id } });
    assert.equal(row.tokenAddress?.toLowerCase(), token.toLowerCase());
    assert.equal(row.tokenAmount, String(PRICE));

    const paid = await fetch(resource.url, { headers: { [done.payment!.header]: done.payment!.value } });
    assert.equal(paid.status, 200, await paid.clone().text());
    assert.deepEqual(await paid.json(), { report: "paid content" });
    assert.equal(await balanceOf(payee), PRICE);
    assert.equal(await balanceOf(suite.wallet.address), before - PRICE);
  });

  it("the SDK waits for the tap: payingFetch gets the report, callPaidTool a paid MCP tool's answer", async () => {
    const wallet = new AgentWalletClient({ baseUrl: suite.app.baseUrl, accessToken: suite.accessToken() });
    const { page } = suite.person;
    /** Runs `paying` while the person approves the payment it asks for, as the agent tells them to. */
    async function approvedWhile<T>(paying: (onPayment: (payment: ToolOutput<"pay_x402">) => void) => Promise<T>): Promise<T> {
      let asked!: (url: string) => void;
      const approvalUrl = new Promise<string>((resolve) => (asked = resolve));
      const answer = paying((payment) => asked(payment.approval_url!));
      await page.goto(await approvalUrl);
      await page.getByRole("button", { name: "Approve with passkey" }).click();
      await page.getByRole("status").waitFor();
      return answer;
    }

    const { resource, payee } = await paidResource("A report paid through the SDK");
    const response = await approvedWhile((onPayment) => payingFetch(wallet, { credentialId: suite.wallet.id, onPayment })(resource.url));
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { report: "paid content" });
    assert.equal(await balanceOf(payee), PRICE);

    const shop = privateKeyToAccount(generatePrivateKey()).address;
    const tool = await startPaidMcpTool({
      facilitator,
      transfer: "eip3009",
      chainId: suite.chain.chainId,
      token,
      payTo: shop,
      amount: PRICE,
      description: "A forecast",
    });
    resources.push(tool);
    const weather = await paidToolClient(tool);
    const { call } = weather;
    try {
      const forecast = await approvedWhile((onPayment) =>
        callPaidTool(wallet, call, { name: "forecast", arguments: { city: "Porto" } }, { credentialId: suite.wallet.id, onPayment }),
      );
      assert.notEqual(forecast.isError, true, forecast.content[0]?.text);
      assert.equal(forecast.content[0].text, "Sunny in Porto");
      assert.equal((forecast._meta?.["x402/payment-response"] as { success: boolean }).success, true);
      assert.equal(await balanceOf(shop), PRICE);
    } finally {
      await weather.close();
    }
  });

  it("an `allowance` credential with no allowance covering the payment gets the same one tap, the page saying why", async () => {
    const entry = { credentialId: suite.wallet.id, grant: { status: "active" } };
    const { grantId } = await db().grantCredential.findFirstOrThrow({ where: entry });
    const granted = { grantId_credentialId: { grantId, credentialId: suite.wallet.id } };
    await db().grantCredential.update({ where: granted, data: { mode: "allowance" } });
    try {
      const { resource, payee, required } = await paidResource("A report no allowance covers");
      const pending = await pendingPayment(required);
      const why = `No live allowance covers USDC to ${payee} here. It waits for your approval; approved, your wallet pays it.`;
      assert.equal((await getRequest(pending.request_id)).reason, why);

      const { page } = suite.person;
      await page.goto(pending.approval_url);
      await page.getByText(`Pay 0.01 USDC to ${payee.slice(0, 6)}…${payee.slice(-4)} for ${resource.url}`, { exact: true }).waitFor();
      await page
        .getByRole("note")
        .filter({ hasText: `Not paid from the allowance: ${why}` })
        .waitFor();
      await page.getByRole("button", { name: "Approve with passkey" }).click();
      await page.getByRole("status").waitFor();

      const done = await getRequest(pending.request_id);
      assert.equal(done.status, "completed");
      assert.equal(done.payment?.header, "PAYMENT-SIGNATURE");
      const paid = await fetch(resource.url, { headers: { [done.payment!.header]: done.payment!.value } });
      assert.equal(paid.status, 200, await paid.clone().text());
      assert.equal(await balanceOf(payee), PRICE);
    } finally {
      await db().grantCredential.update({ where: granted, data: { mode: "approve" } });
    }
  });

  it("permit2: refused until the person lets Permit2 take the amount, then “Pay 0.01 USDC …” with one tap via x402's proxy", async () => {
    await deployPermit2(suite.chain);
    const { resource, payee, required } = await paidResource("A report paid through Permit2", "permit2");
    const requestsBefore = await db().agentRequest.count();
    const unapproved = await pay(required);
    assert.equal(unapproved.isError, true);
    assert.equal(
      unapproved.content[0].text,
      `No way of paying this resource is covered: it asks for chain ${suite.chain.chainId} by permit2, but this wallet lets ` +
        `Permit2 (${PERMIT2}) take 0 USDC, not the 0.01 USDC asked: the person approves Permit2 first (a ` +
        "send_transaction calling approve on the token), or the resource offers eip3009. Nothing was signed.",
    );
    assert.equal(await db().agentRequest.count(), requestsBefore, "no request was created");

    // As the refusal says: the person approves Permit2 for the amount, a transaction of its own.
    const { page } = suite.person;
    const approval = await suite.ask("send_transaction", {
      chain_id: suite.chain.chainId,
      to: token,
      value: "0",
      data: encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [PERMIT2, PRICE] }),
    });
    await page.goto(approval.approval_url);
    await page.getByRole("button", { name: "Approve with passkey" }).click();
    await page.getByRole("status").waitFor();
    const approved = await getRequest(approval.request_id);
    await suite.chain.client.waitForTransactionReceipt({ hash: approved.tx_hash as `0x${string}` });

    const pending = await pendingPayment(required);
    assert.equal(pending.payee, payee);
    await page.goto(pending.approval_url);
    // The payee is the witness's: x402's proxy, the spender, can pay no one else.
    await page.getByText(`Pay 0.01 USDC to ${payee.slice(0, 6)}…${payee.slice(-4)} for ${resource.url}`, { exact: true }).waitFor();
    const details = page.getByRole("region", { name: "Details" });
    assert.ok((await details.getByText(payee).count()) > 0, "the payee in full");
    assert.ok((await details.getByText(X402_EXACT_PERMIT2_PROXY).count()) > 0, "the proxy it is paid through");
    // whom the person deals with is the payee, as with eip3009: the proxy is no spender to check
    await page.getByText("Recipient never used before").waitFor();
    assert.equal(await page.getByText(/Spender/).count(), 0);
    for (const viewport of VIEWPORTS) {
      await page.setViewportSize(viewport);
      assert.deepEqual(await checkScreen(page, `x402-permit2-${viewport.name}`), []);
      assert.equal(await overflow(page), 0, "nothing scrolls sideways");
    }
    await page.getByRole("button", { name: "Approve with passkey" }).click();
    await page.getByRole("status").waitFor();

    const done = await getRequest(pending.request_id);
    assert.equal(done.status, "completed");
    assert.equal(done.payment?.header, "PAYMENT-SIGNATURE");
    const row = await db().agentRequest.findUniqueOrThrow({ where: { id: pending.request_id } });
    assert.equal(row.tokenAmount, String(PRICE), "counted against the policy as the transfer it is");
    const before = await balanceOf(suite.wallet.address);
    const paid = await fetch(resource.url, { headers: { [done.payment!.header]: done.payment!.value } });
    assert.equal(paid.status, 200, await paid.clone().text());
    assert.equal(await balanceOf(payee), PRICE);
    assert.equal(await balanceOf(suite.wallet.address), before - PRICE);
    const left = await suite.chain.client.readContract({
      address: token,
      abi: erc20Abi,
      functionName: "allowance",
      args: [suite.wallet.address, PERMIT2],
    });
    assert.equal(left, 0n, "Permit2 took exactly the payment");
  });

  it("a rejected payment leaves nothing signed, and nothing to pay with", async () => {
    const { resource, payee, required } = await paidResource("A report nobody buys");
    const pending = await pendingPayment(required);
    const { page } = suite.person;
    await page.goto(pending.approval_url);
    await page.getByRole("button", { name: "Reject" }).click();
    await page.getByRole("status").filter({ hasText: "Rejected" }).waitFor();
    const rejected = await getRequest(pending.request_id);
    assert.equal(rejected.status, "rejected");
    assert.equal(rejected.signature, null);
    assert.equal(rejected.payment, undefined);
    const row = await db().agentRequest.findUniqueOrThrow({ where: { id: pending.request_id } });
    assert.equal(row.result, null, "no signature stored");
    assert.equal((await fetch(resource.url)).status, 402);
    assert.equal(await balanceOf(payee), 0n);
  });

  it("erc7710-only offers are refused, saying why, before any request exists", async () => {
    const { required } = await paidResource("An erc7710 report");
    const asked = JSON.parse(Buffer.from(required, "base64").toString("utf8")) as { accepts: { extra: Record<string, unknown> }[] };
    const requestsBefore = await db().agentRequest.count();
    const withMethod = (method: string) =>
      Buffer.from(
        JSON.stringify({
          ...asked,
          accepts: asked.accepts.map((entry) => ({ ...entry, extra: { ...entry.extra, assetTransferMethod: method } })),
        }),
      ).toString("base64");

    const erc7710 = await pay(withMethod("erc7710"));
    assert.equal(erc7710.isError, true);
    assert.match(erc7710.content[0].text, /by erc7710, which Agent Wallet pays only within an allowance/);
    assert.equal(await db().agentRequest.count(), requestsBefore, "no request was created");
  });
});
