// Deciding in three seconds, in Chromium with a virtual passkey on a real local chain, at 375×812 and 1280×800: the
// risk line sits under the headline on the first screen; an unlimited approval to a spender the person does not know
// waits for "I understand" (in the page and at the server); a lowered allowance is exactly what is signed, recorded
// and on the chain; the queue says what each request is in its page's own sentence; after a decision, one outcome
// line and the next request. Nothing scrolls sideways at 375.
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createSiweMessage } from "viem/siwe";
import { encodeFunctionData, erc20Abi, maxUint256, parseEther, parseUnits, recoverTypedDataAddress, type Address, type Hex } from "viem";
import { connectAgent } from "../support/consent";
import { deployErc20 } from "../support/contracts";
import { checkScreen, VIEWPORTS } from "../support/screens";
import { signingAgent } from "../support/signing-agent";
import { db } from "@/lib/db";
import type { RequestView } from "@/contract";
import { eip2612Permit } from "@/lib/wallet/permit.fixture";

const newAddress = () => privateKeyToAccount(generatePrivateKey()).address;

/** "#b42318" as getComputedStyle gives a colour: "rgb(180, 35, 24)". */
const hexToRgb = (hex: string) => `rgb(${[1, 3, 5].map((at) => parseInt(hex.slice(at, at + 2), 16)).join(", ")})`;

/** Nothing makes the person scroll sideways. */
async function noSidewaysScroll(page: Page) {
  const width = await page.evaluate(() => document.scrollingElement!.scrollWidth);
  assert.ok(width <= page.viewportSize()!.width, `the page is ${width}px wide at ${page.viewportSize()!.width}px`);
}

/** The element lies entirely within the first screen, reachable without scrolling. */
async function inFirstViewport(page: Page, selector: string) {
  const box = await page.locator(selector).boundingBox();
  const { height } = page.viewportSize()!;
  assert.ok(box && box.y >= 0 && box.y + box.height <= height, `${selector} at ${JSON.stringify(box)} in ${height}px`);
}

describe("risk above the fold, lowered allowances, and a queue that says what each request is", { timeout: 400_000 }, () => {
  const suite = signingAgent({ email: "risk@example.com", agentName: "Risky Agent" });
  let token: Address;
  let held: Address;
  const approveCall = (spender: Address, amount: bigint) =>
    suite.ask("send_transaction", {
      chain_id: 31337,
      to: token,
      value: "0",
      data: encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [spender, amount] }),
    });
  const allowanceOf = (spender: Address) =>
    suite.chain.client.readContract({ address: token, abi: erc20Abi, functionName: "allowance", args: [suite.wallet.address, spender] });
  const requestView = async (id: string) =>
    ((await suite.agent.callTool({ name: "get_request", arguments: { request_id: id } })) as unknown as { structuredContent: RequestView })
      .structuredContent;
  const approvedEvent = async (id: string) =>
    JSON.parse(
      (
        await db().auditEvent.findFirstOrThrow({
          where: { requestId: id, type: "request.transition", data: { contains: '"to":"approved"' } },
        })
      ).data,
    ) as { lowered?: { asked: string; signed: string }; acknowledged?: string };
  const approveButton = (page: Page) => page.getByRole("button", { name: "Approve with passkey" });
  const understand = (page: Page) => page.getByRole("checkbox", { name: /^I understand/ });

  before(async () => {
    token = await deployErc20(suite.chain, {
      name: "Test Token",
      symbol: "TST",
      supply: parseUnits("1000", 18),
      holder: suite.wallet.address,
    });
    held = await deployErc20(suite.chain, {
      name: "Held Token",
      symbol: "HLD",
      supply: parseUnits("50", 18),
      holder: suite.wallet.address,
    });
  });

  for (const viewport of VIEWPORTS) {
    it(`at ${viewport.width}×${viewport.height}: the risk line is on the first screen, and Approve waits for "I understand"`, async () => {
      const { page } = suite.person;
      await page.setViewportSize(viewport);
      const spender = newAddress();
      const request = await approveCall(spender, maxUint256);
      await page.goto(request.approval_url);
      const risk = page.locator("p.risk");
      await risk.getByText(/Unlimited approval/).waitFor();
      assert.match(await risk.innerText(), /Spender never used before/);
      // Until an approval to it completes, the token's contract is one the person never used.
      if (viewport.name === "phone") assert.match(await risk.innerText(), /Unknown contract: not in your address book, never used/);
      await inFirstViewport(page, "p.risk");
      await inFirstViewport(page, "main .actions");
      await inFirstViewport(page, "label.acknowledge");
      const label = (await page.locator("label.acknowledge").boundingBox())!;
      const actions = (await page.locator("main .actions").boundingBox())!;
      assert.ok(label.y + label.height <= actions.y, "the decision's buttons do not cover what the person must understand");
      await noSidewaysScroll(page);
      await page.getByRole("button", { name: "Reject", disabled: false }).waitFor();
      assert.equal(await approveButton(page).isDisabled(), true, "Approve is disabled until the person understands");
      await understand(page).check();
      assert.equal(await approveButton(page).isEnabled(), true);
      assert.deepEqual(await checkScreen(page, `risk-unlimited-${viewport.name}`), []);

      // The browser signs, but the server records no approval without the acknowledgement either.
      const refused = await page.request.post(`${suite.app.appUrl}/api/approvals/${request.request_id}/options`, {
        data: {},
        headers: { Origin: suite.app.appUrl },
      });
      assert.equal(refused.status(), 400);
      assert.equal(((await refused.json()) as { error: string }).error, "acknowledgement_required");

      if (viewport.name === "phone") {
        await approveButton(page).click();
        await page.getByRole("status").filter({ hasText: "Approved and sent" }).waitFor();
        assert.equal(await allowanceOf(spender), maxUint256);
        assert.match((await approvedEvent(request.request_id)).acknowledged ?? "", /^I understand/);
      } else {
        await page.getByRole("button", { name: "Reject" }).click();
        await page.getByRole("status").filter({ hasText: "Rejected. Nothing was signed." }).waitFor();
      }
    });
  }

  it("a lowered approve is exactly what is signed, recorded, told to the agent and on the chain", async () => {
    const { page } = suite.person;
    await page.setViewportSize(VIEWPORTS[0]);
    const spender = newAddress();
    const request = await approveCall(spender, maxUint256);
    await page.goto(request.approval_url);
    const amount = page.getByLabel("Amount to allow (TST)");
    await amount.fill("lots");
    await page.getByText("Enter an amount of TST, like 100 or 0.5").waitFor();
    assert.equal(await approveButton(page).isDisabled(), true);
    await amount.fill("12.5");
    // No longer unlimited: nothing to acknowledge.
    await understand(page).waitFor({ state: "detached" });

    // The server rebuilds the lowered call itself, and refuses an amount that is not lower.
    const higher = await page.request.post(`${suite.app.appUrl}/api/approvals/${request.request_id}/options`, {
      data: { amount: (maxUint256 + 0n).toString(), acknowledged: true },
      headers: { Origin: suite.app.appUrl },
    });
    assert.equal(((await higher.json()) as { error: string }).error, "amount_not_lower");

    await approveButton(page).click();
    await page.getByRole("status").filter({ hasText: "Approved and sent" }).waitFor();
    const lowered = parseUnits("12.5", 18);
    assert.equal(await allowanceOf(spender), lowered);
    const view = await requestView(request.request_id);
    assert.equal(view.status, "completed");
    assert.equal(view.signed_amount, lowered.toString());
    const row = await db().agentRequest.findUniqueOrThrow({ where: { id: request.request_id } });
    const recorded = JSON.parse(row.payload) as { transaction: { data: Hex } };
    assert.equal(recorded.transaction.data, encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [spender, lowered] }));
    assert.equal(row.tokenAmount, lowered.toString(), "the token caps count what was signed");
    assert.deepEqual((await approvedEvent(request.request_id)).lowered, { asked: "unlimited TST", signed: "12.5 TST" });
    await page.goto(`${suite.app.appUrl}/audit`);
    // One row for the decision, as the person made it, and what came of it.
    const decided = page.locator(".audit-details").filter({ hasText: "you lowered the allowance from unlimited TST to 12.5 TST" });
    assert.match(
      await decided.first().innerText(),
      new RegExp(
        "^Approved by you with a passkey: allow spending of 12\\.5 TST for 0x[0-9a-fA-F]{4}…[0-9a-fA-F]{4} on Local dev chain; " +
          "you lowered the allowance from unlimited TST to 12\\.5 TST · included in a block",
      ),
    );
  });

  it("a lowered permit: the signature is over the lowered value, which the agent is told", async () => {
    const { page } = suite.person;
    await page.setViewportSize(VIEWPORTS[1]);
    const spender = newAddress();
    const typedData = eip2612Permit({ token, owner: suite.wallet.address, spender, value: parseUnits("50", 18).toString() });
    const request = await suite.ask("sign_typed_data", { typed_data: typedData });
    await page.goto(request.approval_url);
    const amount = page.getByLabel("Amount to allow (TST)");
    assert.equal(await amount.inputValue(), "50");
    await amount.fill("3");
    await approveButton(page).click();
    await page.getByRole("status").filter({ hasText: "Approved and signed" }).waitFor();
    const view = await requestView(request.request_id);
    assert.equal(view.signed_amount, parseUnits("3", 18).toString());
    const signed = { ...typedData, message: { ...typedData.message, value: parseUnits("3", 18).toString() } };
    const signer = await recoverTypedDataAddress({ ...signed, signature: view.signature as Hex } as never);
    assert.equal(signer, suite.wallet.address);
  });

  for (const viewport of VIEWPORTS) {
    it(`at ${viewport.width}×${viewport.height}: the queue's sentences are unique and its pages' own, with a risk chip`, async () => {
      const { page } = suite.person;
      await page.setViewportSize(viewport);
      await db().agentRequest.updateMany({ where: { status: "pending" }, data: { status: "cancelled" } });
      await suite.ask("send_transaction", { chain_id: 31337, to: newAddress(), value: String(parseEther("0.01")) });
      await suite.ask("send_transaction", { chain_id: 31337, to: newAddress(), value: String(parseEther("0.02")) });
      await approveCall(newAddress(), maxUint256);
      await suite.ask("sign_message", { message: `0x${"ab".repeat(120)}` });
      // A token the wallet holds, never used before: sending it is not dealing with an unknown contract.
      await suite.ask("send_transaction", {
        chain_id: 31337,
        to: held,
        value: "0",
        data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [newAddress(), parseUnits("1", 18)] }),
      });
      // A sign-in written for a site that is not the asking client's: the phishing pattern, red in the queue too.
      const signIn = createSiweMessage({
        domain: "wallet-drainer.example",
        address: suite.wallet.address,
        uri: "https://wallet-drainer.example/login",
        version: "1",
        chainId: 31337,
        nonce: `n${viewport.name}2x9Kq7`,
      });
      await suite.ask("sign_message", { message: signIn });
      await page.goto(`${suite.app.appUrl}/approvals`);
      const waiting = page.getByRole("region", { name: /Waiting for you/ });
      await waiting.getByRole("heading", { name: "Waiting for you (6)" }).waitFor();
      await noSidewaysScroll(page);
      assert.deepEqual(await checkScreen(page, `queue-${viewport.name}`), []);
      const links = waiting.locator("a.headline");
      const headlines = await links.allInnerTexts();
      assert.equal(new Set(headlines).size, 6, `unique: ${headlines.join(" | ")}`);
      assert.ok(headlines.some((headline) => headline.startsWith("Allow spending of unlimited TST for 0x")));
      const chips = await waiting.locator(".badge.risk").allInnerTexts();
      assert.ok(
        chips.some((chip) => chip.startsWith("Unlimited approval")),
        `chips: ${chips.join(" | ")}`,
      );
      assert.ok(chips.includes("Recipient never used before"), `chips: ${chips.join(" | ")}`);
      const rowOf = (text: string) => waiting.getByRole("listitem").filter({ hasText: text });
      // "+1" says what it stands for.
      assert.equal(await rowOf("Allow spending of unlimited TST").locator(".badge.risk.more").innerText(), "+1: Spender never used before");
      assert.deepEqual(await rowOf("Transfer 1 HLD to").locator(".badge.risk").allInnerTexts(), ["Recipient never used before"]);
      const phishing = rowOf("Sign in to wallet-drainer.example with Main").locator(".badge.risk");
      assert.deepEqual(await phishing.allInnerTexts(), ["Sign-in for another site: wallet-drainer.example is not the asking app's"]);
      const colors = await phishing.evaluate((chip) => [getComputedStyle(chip).backgroundColor, getComputedStyle(chip).color]);
      const danger = await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue("--danger").trim());
      assert.equal(colors[0], hexToRgb(danger), "the phishing chip is solid red");
      const hrefs = await Promise.all((await links.all()).map((link) => link.getAttribute("href")));
      for (const [index, href] of hrefs.entries()) {
        await page.goto(`${suite.app.appUrl}${href}`);
        assert.equal(await page.locator("p.headline").innerText(), headlines[index]);
        await noSidewaysScroll(page);
      }
    });
  }

  it("after each decision, one outcome line and the next request, then back to the queue", async () => {
    const { page } = suite.person;
    await page.setViewportSize(VIEWPORTS[0]);
    await db().agentRequest.updateMany({ where: { status: "pending" }, data: { status: "cancelled" } });
    const first = await suite.ask("sign_message", { message: "first" });
    await suite.ask("sign_message", { message: "second" });
    await suite.ask("send_transaction", { chain_id: 31337, to: newAddress(), value: String(parseEther("0.01")) });
    const outcomeLines = page.locator(".decision > [role=status], .decision > [role=alert], .decision > p.outcome");

    await page.goto(first.approval_url);
    await page.getByRole("button", { name: "Reject" }).click();
    await page.getByRole("link", { name: "Next request (2 waiting)" }).click();
    await page.getByText("second", { exact: true }).waitFor();
    assert.equal(await outcomeLines.count(), 1);
    await approveButton(page).click();
    await page.getByRole("status").filter({ hasText: "Approved and signed" }).waitFor();
    await page.getByRole("link", { name: "Next request (1 waiting)" }).waitFor();
    assert.equal(await outcomeLines.count(), 1, "one outcome line after a decision");
    await noSidewaysScroll(page);
    await page.getByRole("link", { name: "Next request (1 waiting)" }).click();
    await page.getByText(/^Send 0\.01 ETH to/).waitFor();
    await approveButton(page).click();
    await page.getByRole("status").filter({ hasText: "Approved and sent" }).waitFor();
    await page.getByRole("link", { name: "Back to the queue" }).click();
    await page.getByRole("heading", { name: "Waiting for you (0)" }).waitFor();
  });

  it("the queue counts every request waiting, also beyond those it lists", async () => {
    const { page } = suite.person;
    await db().agentRequest.updateMany({ where: { status: "pending" }, data: { status: "cancelled" } });
    // At most 50 wait per grant, so a second agent asks the rest.
    for (let index = 0; index < 50; index++) await suite.ask("sign_message", { message: `burst ${index}` });
    const second = (await connectAgent(suite.app, page, "Second Agent", [{ name: "Main", mode: "approve" }])).client;
    for (let index = 0; index < 3; index++) {
      await second.callTool({ name: "sign_message", arguments: { credential_id: suite.wallet.id, message: `second ${index}` } });
    }
    await second.close();
    await page.goto(`${suite.app.appUrl}/approvals`);
    await page.getByRole("heading", { name: "Waiting for you (53)" }).waitFor();
    const waiting = page.getByRole("region", { name: "Waiting for you (53)" }).getByRole("listitem");
    assert.equal(await waiting.count(), 50);
    await page.getByText("The newest 50 are listed").waitFor();
    assert.match(await page.title(), /^\(53\) Approvals/);
  });
});
