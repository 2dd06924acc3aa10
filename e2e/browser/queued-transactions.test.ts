// An agent queues several transactions on one wallet; the person decides them in any order, in Chromium with a
// virtual passkey, and each approved one lands on the local chain: its nonce is fixed when the person approves it,
// not when the agent asked, so a later request approved first goes first and a rejected one leaves no gap.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { parseEther, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { signingAgent } from "../support/signing-agent";
import type { RequestView } from "@/contract";

/** The approval page's Nonce field. */
const shownNonce = async (page: Page) => (await page.locator('dt:text-is("Nonce") + dd').textContent())?.trim();

describe("queued transactions approved in any order", { timeout: 300_000 }, () => {
  const suite = signingAgent({ email: "queue@example.com", agentName: "Queue Agent" });

  async function approve(request: RequestView): Promise<RequestView> {
    const { page } = suite.person;
    await page.goto(request.approval_url);
    assert.equal(await shownNonce(page), "Set when you approve: the next free one of this wallet");
    await page.getByRole("button", { name: "Approve with passkey" }).click();
    await page.getByRole("status").filter({ hasText: "Approved and sent" }).waitFor();
    const done = (await suite.agent.callTool({ name: "get_request", arguments: { request_id: request.request_id } })) as unknown as {
      structuredContent: RequestView;
    };
    return done.structuredContent;
  }

  it("approves the second of two queued sends first, then the first: both land, in the order approved", async () => {
    const { chain, wallet } = suite;
    const [first, second] = [privateKeyToAccount(generatePrivateKey()).address, privateKeyToAccount(generatePrivateKey()).address];
    const start = await chain.client.getTransactionCount({ address: wallet.address });
    const earlier = await suite.ask("send_transaction", { chain_id: 31337, to: first, value: String(parseEther("0.01")) });
    const later = await suite.ask("send_transaction", { chain_id: 31337, to: second, value: String(parseEther("0.02")) });
    const declined = await suite.ask("send_transaction", { chain_id: 31337, to: first, value: "1" });

    const laterDone = await approve(later);
    // Rejected between the two approvals: it never had a nonce, so it leaves no gap.
    await suite.person.page.goto(declined.approval_url);
    await suite.person.page.getByRole("button", { name: "Reject" }).click();
    await suite.person.page.getByRole("status").filter({ hasText: "Rejected" }).waitFor();
    const earlierDone = await approve(earlier);

    for (const done of [laterDone, earlierDone]) {
      assert.equal(done.status, "completed", JSON.stringify(done));
      const receipt = await chain.client.getTransactionReceipt({ hash: done.tx_hash as Hex });
      assert.equal(receipt.status, "success");
    }
    const sent = await Promise.all([laterDone, earlierDone].map((done) => chain.client.getTransaction({ hash: done.tx_hash as Hex })));
    assert.deepEqual(
      sent.map((transaction) => transaction.nonce),
      [start, start + 1],
      "nonces in the order the person approved",
    );
    assert.equal(await chain.client.getBalance({ address: first }), parseEther("0.01"));
    assert.equal(await chain.client.getBalance({ address: second }), parseEther("0.02"));
    // The page shows the nonce that was signed.
    await suite.person.page.goto(earlier.approval_url);
    assert.equal(await shownNonce(suite.person.page), String(start + 1));
  });

  it("a transaction the node refuses shows the failure alone, never a success line beside it", async () => {
    const { chain, wallet, person } = suite;
    const request = await suite.ask("send_transaction", { chain_id: 31337, to: wallet.address, value: String(parseEther("1")) });
    // The wallet is emptied after the request was prepared: the node refuses the signed transaction.
    await chain.client.request({ method: "hardhat_setBalance" as never, params: [wallet.address, "0x0"] as never });
    try {
      await person.page.goto(request.approval_url);
      await person.page.getByRole("button", { name: "Approve with passkey" }).click();
      await person.page.getByRole("alert").filter({ hasText: "Approved, but the transaction failed" }).waitFor();
      // The page re-rendered as failed (no decision left), and the failure stays its one outcome line.
      await person.page.getByRole("button", { name: "Approve with passkey" }).waitFor({ state: "detached" });
      assert.equal(await person.page.getByRole("alert").filter({ hasText: "Approved, but the transaction failed" }).count(), 1);
      assert.equal(await person.page.getByRole("status").count(), 0, "no success line beside the failure");
      assert.equal(await person.page.getByText(/Approved and (sent|signed)/).count(), 0);
    } finally {
      await chain.fund(wallet.address, "10");
    }
  });
});
