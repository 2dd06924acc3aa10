// The audit log reads as sentences, in Chromium at a phone's width and a desktop's: an agent's real payment to a
// contact, approved with the person's passkey and mined on the local chain, is one row, "Approved by you with a passkey:
// send 0.1 ETH to Alice · included in a block", with its transaction on the chain's explorer and its steps a tap away;
// a rejected unlimited approval reads "Rejected: allow spending of unlimited TST for 0x9A9f…63AE"; an agent's reads
// stand apart from the decisions; every time is in one zone, named once. Each screen passes axe and is written to
// test-results/screenshots.
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { encodeFunctionData, erc20Abi, maxUint256, parseEther, parseUnits } from "viem";
import { deployErc20 } from "../support/contracts";
import { signingAgent } from "../support/signing-agent";
import { checkScreen, overflow, VIEWPORTS } from "../support/screens";
import { db } from "@/lib/db";
import { saveContact } from "@/lib/wallet/address-book";

const ALICE = "0x000000000000000000000000000000000000A11c";
const SPENDER = "0x9A9f2CCfdE556A7E9Ff0848998Aa4a0CFD8863AE";
const EXPLORER = "https://explorer.example";

describe("the audit log in sentences", { timeout: 300_000 }, () => {
  const suite = signingAgent({ email: "audit-sentences@example.com", agentName: "Payroll bot", explorerUrl: EXPLORER });
  let txHash: string;

  before(async () => {
    const { page, email } = suite.person;
    const user = await db().user.findUniqueOrThrow({ where: { email } });
    await saveContact(user.id, { address: ALICE, label: "Alice" });
    for (let read = 0; read < 2; read++)
      await suite.agent.callTool({ name: "get_balance", arguments: { credential_id: suite.wallet.id, chain_id: 31337 } });
    const request = await suite.ask("send_transaction", { chain_id: 31337, to: ALICE, value: String(parseEther("0.1")) });
    await page.goto(request.approval_url);
    await page.getByRole("button", { name: "Approve with passkey" }).click();
    const done = (await suite.agent.callTool({
      name: "get_request",
      arguments: { request_id: request.request_id, wait_seconds: 30 },
    })) as unknown as { structuredContent: { status: string; tx_hash: string } };
    assert.equal(done.structuredContent.status, "completed");
    txHash = done.structuredContent.tx_hash;

    // An unlimited approval of a token, rejected on its page.
    const token = await deployErc20(suite.chain, {
      name: "Test Token",
      symbol: "TST",
      supply: parseUnits("5", 18),
      holder: suite.wallet.address,
    });
    const approval = await suite.ask("send_transaction", {
      chain_id: 31337,
      to: token,
      value: "0",
      data: encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [SPENDER, maxUint256] }),
    });
    await page.goto(approval.approval_url);
    await page.getByRole("button", { name: "Reject" }).click();
    await page.getByRole("status").filter({ hasText: "Rejected. Nothing was signed." }).waitFor();
  });

  for (const viewport of VIEWPORTS) {
    it(`says who did what in words, with the transaction's link, reads apart, in one time zone (${viewport.name})`, async () => {
      const { page } = suite.person;
      await page.setViewportSize(viewport);
      await page.goto(`${suite.app.appUrl}/audit`);
      const decisions = page.getByRole("region", { name: "Decisions and changes" });
      const reads = page.getByRole("region", { name: "Reads by agents" });
      const decided = await decisions.innerText();
      // One row per request: the agent's call, the asking, the decision and what came of it are its steps, a tap away.
      const sent = decisions
        .getByRole("row")
        .filter({ hasText: "Approved by you with a passkey: send 0.1 ETH to Alice · included in a block" });
      assert.equal(await sent.count(), 1);
      assert.equal(await sent.getByRole("link").getAttribute("href"), `${EXPLORER}/tx/${txHash}`);
      assert.doesNotMatch(decided, /asked to send 0\.1 ETH/, "the asking is a step of the request's row, not a row");
      await sent.getByText("5 events").click();
      const steps = await sent.getByRole("listitem").allInnerTexts();
      assert.equal(steps.length, 5);
      assert.match(steps.join("\n"), /Payroll bot asked to send 0\.1 ETH to Alice/);
      assert.match(steps.join("\n"), /Sent 0\.1 ETH to Alice — approved by you with a passkey/);
      assert.match(steps.join("\n"), /Sent 0\.1 ETH to Alice: included in a block/);
      // A rejection says what was refused, as its page did, in one row.
      const short = `${SPENDER.slice(0, 6)}…${SPENDER.slice(-4)}`;
      const rejected = decisions.getByRole("row").filter({ hasText: /allow spending of unlimited TST/i });
      assert.equal(await rejected.count(), 1);
      assert.match(
        await rejected.locator(".audit-details").innerText(),
        new RegExp(`^Rejected: allow spending of unlimited TST for ${short} on Local dev chain\\s+3 events$`),
      );
      assert.ok(!decided.includes("read a balance"), "reads are not among the decisions");
      assert.equal(await reads.getByRole("row").filter({ hasText: "Payroll bot read a balance" }).count(), 2);

      const main = await page.getByRole("main").innerText();
      assert.equal(main.match(/UTC/g)?.length, 1, "the time zone is named once");
      const times = await page.locator("main time:visible").allInnerTexts();
      assert.ok(times.length > 0 && times.every((time) => /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(time)), times.join(", "));
      assert.deepEqual(await checkScreen(page, `audit-sentences-${viewport.name}`), []);
      assert.equal(await overflow(page), 0);
    });
  }
});
