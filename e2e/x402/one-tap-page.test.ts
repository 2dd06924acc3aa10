// The one-tap EIP-3009 payment's page as a person reads it (issue 56, item 4d), with real parts: Chromium with a
// virtual passkey, Circle's USDC deployed before the app starts and listed for the chain in CHAINS (as an operator
// configures it), a resource built with the real `@x402/express` asking for eip3009, and the real MCP SDK client. The
// payee is named from the address book; the resource is the merchant's claim, its host apart from its path; the page
// says one validity time; the token the operator listed is neither "a name the app chose" nor an "Unknown contract".
// A requirement whose resource is no URL is refused before anything is held or asked.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { FacilitatorClient } from "@x402/core/server";
import { chainsSetting } from "../support/chain";
import { mintFiatToken } from "../support/contracts";
import { deployFiatToken } from "@/test-chain/fiat-token";
import { checkScreen, overflow, VIEWPORTS, widestElement } from "../support/screens";
import { signingAgent } from "../support/signing-agent";
import { startEip3009Facilitator } from "../support/x402-eip3009";
import { startPaidResourceAsking, type PaidResource } from "../support/x402-resource";
import { db } from "@/lib/db";
import type { ToolOutput } from "@/contract";

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { type: string; text: string }[] };

const PRICE = 10_000n;

describe("the one-tap x402 payment's page", { timeout: 300_000 }, () => {
  let token: Address;
  const suite = signingAgent({
    email: "one-tap-page@example.com",
    agentName: "Paying Agent",
    env: async (chain) => {
      token = (await deployFiatToken(chain)).address;
      return { CHAINS: chainsSetting(chain, { tokens: [token] }) };
    },
  });
  let facilitator: FacilitatorClient;
  const resources: PaidResource[] = [];

  before(async () => {
    await mintFiatToken(suite.chain, token, suite.wallet.address, 1_000_000n);
    facilitator = await startEip3009Facilitator(suite.chain);
  });
  after(async () => {
    for (const resource of resources) await resource.close();
  });

  async function paidResource(payTo: Address) {
    const asking = await startPaidResourceAsking({
      facilitator,
      transfer: "eip3009",
      chainId: suite.chain.chainId,
      token,
      payTo,
      amount: PRICE,
      description: "Today's weather report",
    });
    resources.push(asking.resource);
    return asking;
  }

  const pay = async (required: unknown) =>
    (await suite.agent.callTool({
      name: "pay_x402",
      arguments: { credential_id: suite.wallet.id, payment_required: required },
    })) as ToolResult;

  it("names the payee from the address book, the resource as the merchant's claim, and one validity time", async () => {
    const payee = privateKeyToAccount(generatePrivateKey()).address;
    const { userId } = await db().credential.findUniqueOrThrow({ where: { id: suite.wallet.id } });
    const { saveContact } = await import("@/lib/wallet/address-book");
    await saveContact(userId, { address: payee, label: "Weather Shop" });
    const { resource, required } = await paidResource(payee);
    const result = await pay(required);
    assert.notEqual(result.isError, true, result.content[0]?.text);
    const pending = result.structuredContent as ToolOutput<"pay_x402">;

    const { page } = suite.person;
    const { host, pathname } = new URL(resource.url);
    for (const viewport of VIEWPORTS) {
      await page.setViewportSize(viewport);
      await page.goto(pending.approval_url!);
      await page.getByText(`Pay 0.01 USDC to Weather Shop for ${resource.url}`, { exact: true }).waitFor();
      const details = page.getByRole("region", { name: "Details" });
      assert.equal(await details.locator(".resource-host").textContent(), host);
      assert.equal(await details.locator(".resource-path").textContent(), pathname);
      await details.getByText("The merchant's claim", { exact: false }).waitFor();
      // the payee by name wherever it is shown, with its address in full
      const recipient = details
        .locator("dd")
        .filter({ has: page.getByText(payee, { exact: true }) })
        .first();
      await recipient.getByText("Weather Shop", { exact: true }).waitFor();
      const text = (await page.locator("main").innerText()).replace(/\s+/g, " ");
      // one validity time: the signature's (the request's own expiry is not a second one)
      assert.equal(await details.locator("dt", { hasText: /^Expires$/ }).count(), 0, "no second validity time");
      assert.equal((text.match(/valid until/gi) ?? []).length, 1, text);
      // the operator listed the token: its domain is not an app's unchecked claim
      assert.ok(!text.includes("nothing checks it"), text);
      assert.ok(!text.includes("Unknown contract"), `the listed token is called an unknown contract: ${text}`);
      await details.getByText("(the token contract this service lists for the chain)", { exact: true }).waitFor();
      assert.deepEqual(await checkScreen(page, `x402-one-tap-page-${viewport.name}`), []);
      assert.equal(await overflow(page), 0, `nothing scrolls sideways: ${await widestElement(page)}`);
    }
    await page.getByRole("button", { name: "Reject" }).click();
    await page.getByRole("status").waitFor();
  });

  it("refuses a requirement whose resource is no URL, holding and asking nothing", async () => {
    const payee = privateKeyToAccount(generatePrivateKey()).address;
    const { required } = await paidResource(payee);
    const decoded = JSON.parse(Buffer.from(required, "base64").toString()) as { resource: { url: string } };
    const before = await db().agentRequest.count({ where: { credentialId: suite.wallet.id } });
    for (const url of ["Today's weather report", "/report"]) {
      const forged = Buffer.from(JSON.stringify({ ...decoded, resource: { ...decoded.resource, url } })).toString("base64");
      const result = await pay(forged);
      assert.equal(result.isError, true);
      assert.equal(
        result.content[0].text,
        "This x402 V2 requirement is not valid: resource.url must be the resource's URL (such as https://host/path).",
      );
    }
    assert.equal(await db().agentRequest.count({ where: { credentialId: suite.wallet.id } }), before, "nothing asked of the person");
  });
});
