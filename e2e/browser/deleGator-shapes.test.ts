// A wallet that runs the DeleGator (its address carries EIP-7702 code pointing at EIP7702StatelessDeleGator, as after an
// allowance) cannot move its coin past a native cap by asking for the DeleGator's own shapes: an `execute` sent to
// itself is counted (refused over the cap, with nothing waiting for the person; within it, held like a transfer), its
// approval page says what it runs in words, and one passkey tap moves exactly that; a Delegation's typed data shows
// each caveat in words and, without any, a danger warning — and is refused under a cap.
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import {
  createAllowedTargetsTerms,
  createExactCalldataTerms,
  createLimitedCallsTerms,
  createNativeTokenPeriodTransferTerms,
  createTimestampTerms,
} from "@metamask/delegation-core";
import { concat, parseEther, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { deployFramework, frameworksSetting, type FrameworkEnvironment } from "@/test-chain/delegation-framework";
import { checkScreen } from "../support/screens";
import { signingAgent } from "../support/signing-agent";
import { db } from "@/lib/db";
import type { Policy, RequestView } from "@/contract";
import { delegationTypedData, execute, userOperationTypedData } from "@/lib/allowances/deleGator.fixture";

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { text?: string }[] };

const details = (page: Page) => page.getByRole("region", { name: "Details" });
const short = (address: Address) => `${address.slice(0, 6)}…${address.slice(-4)}`;
/** "Up to 0.05 ETH a transaction, 0.2 ETH a day", refuse-unlimited unchecked. */
const UP_TO_005: Policy = { native: { per_transaction: String(parseEther("0.05")), per_day: String(parseEther("0.2")) } };

describe("the DeleGator's shapes under a native cap, and in words on the approval page", { timeout: 300_000 }, () => {
  let environment: FrameworkEnvironment;
  const suite = signingAgent({
    email: "delegator@example.com",
    agentName: "DeleGator Agent",
    env: async (chain) => {
      environment = await deployFramework(chain);
      return { ALLOWANCE_FRAMEWORKS: frameworksSetting(chain, environment) };
    },
  });
  const taker = privateKeyToAccount(generatePrivateKey()).address;
  const call = async (tool: string, args: Record<string, unknown>) =>
    (await suite.agent.callTool({ name: tool, arguments: { credential_id: suite.wallet.id, ...args } })) as ToolResult;
  const pending = () => db().agentRequest.count({ where: { credentialId: suite.wallet.id, status: "pending" } });
  /** The agent's request to the wallet itself that its DeleGator sends `ether` to the taker. */
  const executeSend = (ether: string) =>
    call("send_transaction", {
      chain_id: suite.chain.chainId,
      to: suite.wallet.address,
      value: "0",
      data: execute([{ target: taker, value: parseEther(ether), callData: "0x" }]),
    });
  /** The agent asks the wallet to sign a Delegation to `delegate`, on the deployed DelegationManager. */
  const delegation = (delegate: Address, caveats: { enforcer: Address; terms: Hex }[]) =>
    call("sign_typed_data", { typed_data: delegationTypedData(environment, { delegate, delegator: suite.wallet.address, caveats }) });

  async function withPolicy(policy: Policy) {
    const { grantId } = await db().grantCredential.findFirstOrThrow({ where: { credentialId: suite.wallet.id } });
    await db().grantCredential.update({
      where: { grantId_credentialId: { grantId, credentialId: suite.wallet.id } },
      data: { policy: JSON.stringify(policy) },
    });
  }

  before(async () => {
    // The wallet has had an allowance: its address runs the DeleGator.
    const code = concat(["0xef0100", environment.implementations.EIP7702StatelessDeleGatorImpl]);
    await suite.chain.client.request({ method: "hardhat_setCode" as never, params: [suite.wallet.address, code] as never });
  });

  it("execute(single, (taker, 1 ETH, 0x)) to the wallet itself under 0.05 ETH a transaction: refused, nothing waits", async () => {
    await withPolicy(UP_TO_005);
    const before = await pending();
    const refused = await executeSend("1");
    assert.equal(refused.isError, true, JSON.stringify(refused));
    assert.equal(refused.structuredContent?.rule, "native.per_transaction");
    assert.match(refused.content?.[0]?.text ?? "", /1 ETH is over your limit of 0\.05 ETH a transaction for Main/);
    assert.equal(await pending(), before, "nothing is pending for the person");
  });

  it("0.01 ETH run the same way is counted like a transfer, said in words, and one passkey tap sends exactly it", async () => {
    await withPolicy(UP_TO_005);
    const asked = await executeSend("0.01");
    assert.notEqual(asked.isError, true, asked.content?.[0]?.text);
    const request = asked.structuredContent as unknown as RequestView;
    const left = (await call("get_policy", {})).structuredContent as { remaining: { native_per_day: { remaining: string } } };
    assert.equal(left.remaining.native_per_day.remaining, String(parseEther("0.19")), "held against the day's cap");

    // Before the person decides, the audit log says what the call runs, not a call of 0 ETH to the wallet itself.
    const { namesFor, summarizeEvent } = await import("@/lib/audit/describe");
    const { parseAuditData } = await import("@/lib/audit/query");
    const [askedEvent] = await db().auditEvent.findMany({
      where: { type: "request.transition", requestId: request.request_id },
      orderBy: { seq: "asc" },
      take: 1,
    });
    const event = { ...askedEvent, data: parseAuditData(askedEvent.data) };
    assert.match(
      summarizeEvent(event, await namesFor(askedEvent.userId!, [event], {})),
      new RegExp(`asked to run through execute on ${suite.wallet.address}: send 0\\.01 ETH to ${taker}$`),
    );

    const { page } = suite.person;
    await page.goto(request.approval_url);
    await page.getByText(`Run from your wallet: Send 0.01 ETH to ${short(taker)} on Local dev chain`, { exact: true }).waitFor();
    const run = details(page)
      .getByRole("definition")
      .filter({ has: page.getByText("Send 0.01 ETH", { exact: true }) });
    await run.getByText(taker).waitFor();
    await details(page).getByRole("term").filter({ hasText: "Run from your wallet" }).waitFor();
    assert.equal(await page.getByText(/unknown function/i).count(), 0, "never an unknown function");
    assert.deepEqual(await checkScreen(page, "delegator-execute"), []);

    await page.getByRole("button", { name: "Approve with passkey" }).click();
    await page.getByRole("status").filter({ hasText: "Approved and sent" }).waitFor();
    const done = (await call("get_request", { request_id: request.request_id })).structuredContent as unknown as RequestView;
    assert.equal(done.status, "completed");
    assert.equal(await suite.chain.client.getBalance({ address: taker }), parseEther("0.01"));
  });

  it("a Delegation without caveats: refused under the cap; without one, a danger warning and the person's “I understand”", async () => {
    // A delegate this person has never paid nor named.
    const stranger = privateKeyToAccount(generatePrivateKey()).address;
    await withPolicy(UP_TO_005);
    const refused = await delegation(stranger, []);
    assert.equal(refused.structuredContent?.rule, "native.per_transaction");
    assert.match(refused.content?.[0]?.text ?? "", /no caveats/);

    await withPolicy({});
    const asked = await delegation(stranger, []);
    const { page } = suite.person;
    await page.goto((asked.structuredContent as unknown as RequestView).approval_url);
    await page.getByText(`Delegate full control of your wallet to ${short(stranger)} — by signature, no transaction`).waitFor();
    await page
      .getByRole("alert")
      .filter({ hasText: `No caveats: this gives ${stranger} full control of this wallet's funds` })
      .waitFor();
    const understand = page.getByRole("checkbox", { name: "I understand: a delegate I do not know could take all of it" });
    await understand.waitFor();
    assert.deepEqual(await checkScreen(page, "delegation-without-caveats"), []);
    await page.getByRole("button", { name: "Reject" }).click();
    await page.getByRole("status").filter({ hasText: "Rejected. Nothing was signed." }).waitFor();
  });

  it("a Delegation's caveats in words by their enforcers; bounded within the cap, it is counted", async () => {
    await withPolicy(UP_TO_005);
    const start = Math.floor(Date.now() / 1000);
    const enforcers = environment.caveatEnforcers as Record<string, Address>;
    const asked = await delegation(taker, [
      { enforcer: enforcers.AllowedTargetsEnforcer, terms: createAllowedTargetsTerms({ targets: [taker] }) },
      { enforcer: enforcers.ExactCalldataEnforcer, terms: createExactCalldataTerms({ calldata: "0x" }) },
      {
        enforcer: enforcers.NativeTokenPeriodTransferEnforcer,
        terms: createNativeTokenPeriodTransferTerms({ periodAmount: parseEther("0.05"), periodDuration: 86_400, startDate: start }),
      },
      { enforcer: enforcers.TimestampEnforcer, terms: createTimestampTerms({ afterThreshold: 0, beforeThreshold: start + 3 * 86_400 }) },
      { enforcer: enforcers.LimitedCallsEnforcer, terms: createLimitedCallsTerms({ limit: 1 }) },
    ]);
    assert.notEqual(asked.isError, true, asked.content?.[0]?.text);
    const left = (await call("get_policy", {})).structuredContent as { remaining: { native_per_day: { remaining: string } } };
    assert.equal(left.remaining.native_per_day.remaining, String(parseEther("0.14")), "its 0.05 ETH held beside the 0.01 sent");

    const { page } = suite.person;
    await page.goto((asked.structuredContent as unknown as RequestView).approval_url);
    const shown = details(page);
    await shown.getByText(/^up to 0\.05 ETH a day, periods counted from /).waitFor();
    await shown.getByText("at most 1 call", { exact: true }).waitFor();
    await shown.getByText(`only calls to ${taker}`, { exact: true }).waitFor();
    await shown.getByText(/^until \d{4}-\d\d-\d\d \d\d:\d\d UTC$/).waitFor();
    await shown.getByText("0.05 ETH", { exact: true }).waitFor();
    assert.equal(await page.getByRole("alert").filter({ hasText: "caveats" }).count(), 0, "a bounded delegation carries no warning");
    assert.deepEqual(await checkScreen(page, "delegation-with-caveats"), []);
    await page.getByRole("button", { name: "Reject" }).click();
    await page.getByRole("status").filter({ hasText: "Rejected. Nothing was signed." }).waitFor();
  });

  it("a user operation for the wallet counts its calls and its gas, and says them in words", async () => {
    await withPolicy(UP_TO_005);
    const operation = (ether: string) =>
      call("sign_typed_data", {
        typed_data: userOperationTypedData(
          environment,
          suite.wallet.address,
          execute([{ target: taker, value: parseEther(ether), callData: "0x" }]),
        ),
      });
    assert.equal((await operation("1")).structuredContent?.rule, "native.per_transaction");
    const asked = await operation("0.01");
    assert.notEqual(asked.isError, true, asked.content?.[0]?.text);
    // The 0.01 ETH sent and completed, and this one's 0.01 ETH with at most 290,000 gas at 1 gwei.
    const left = (await call("get_policy", {})).structuredContent as { remaining: { native_per_day: { remaining: string } } };
    assert.equal(left.remaining.native_per_day.remaining, String(parseEther("0.18") - 290_000n * 1_000_000_000n));

    const { page } = suite.person;
    await page.goto((asked.structuredContent as unknown as RequestView).approval_url);
    await page.getByText(`Run from your wallet: Send 0.01 ETH to ${short(taker)} — by signature, as a user operation`).waitFor();
    await details(page)
      .getByRole("definition")
      .filter({ hasText: /^0\.00029 ETH \(raw integer 290000000000000\)$/ })
      .waitFor();
    await page.getByRole("button", { name: "Reject" }).click();
    await page.getByRole("status").filter({ hasText: "Rejected. Nothing was signed." }).waitFor();
  });
});
