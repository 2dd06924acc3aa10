// A refusal by a cap, as the agent reads it: in the person's units (the chain's coin, the token's symbol and
// decimals read from its contract), which limit it went over, naming the wallet, what is left and when the cap
// resets (with its date: not today); the rule's id and the machine-readable amounts stay fields of their own, in wei
// and base units. Through the MCP SDK client, on a local chain with a deployed ERC-20.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { encodeFunctionData, erc20Abi, parseEther, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { startApp, type RunningApp } from "../support/app";
import { chainsSetting, startChain, type LocalChain } from "../support/chain";
import { deployErc20 } from "../support/contracts";
import { connectWithBearer } from "../support/mcp-client";
import { signerGrant } from "../support/oauth";
import { db } from "@/lib/db";
import type { Policy } from "@/contract";

type Reply = { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { type: string; text?: string }[] };

const FRIEND = "0x000000000000000000000000000000000000bEEF";

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
/** "on 29 Nov at 11:42 UTC" (another day: the rolling day's cap frees a day after the request created at `at`). */
function dayAfter(at: Date): string {
  const reset = new Date(at.getTime() + 86_400_000);
  const year = reset.getUTCFullYear() === new Date().getUTCFullYear() ? "" : ` ${reset.getUTCFullYear()}`;
  return `on ${reset.getUTCDate()} ${MONTHS[reset.getUTCMonth()]}${year} at ${reset.toISOString().slice(11, 16)} UTC`;
}

describe("a refusal in the person's units", { timeout: 180_000 }, () => {
  let chain: LocalChain;
  let app: RunningApp;
  let agent: Client;
  let grantId = "";
  let credentialId = "";
  let token: Address;

  before(async () => {
    chain = await startChain();
    app = await startApp({ env: { CHAINS: chainsSetting(chain) } });
    const owner = privateKeyToAccount(generatePrivateKey()).address;
    await chain.fund(owner, "100");
    token = await deployErc20(chain, { name: "Test Dollar", symbol: "TUSD", supply: 10n ** 24n, holder: owner });
    const grant = await signerGrant(app, owner);
    ({ grantId, credentialId } = grant);
    agent = await connectWithBearer(app.baseUrl, grant.bearer);
  });
  after(async () => {
    await agent?.close();
    await app?.stop();
    await chain?.stop();
  });

  async function withPolicy(policy: Policy) {
    await db().grantCredential.update({
      where: { grantId_credentialId: { grantId, credentialId } },
      data: { policy: JSON.stringify(policy) },
    });
  }
  const send = async (ether: string, data: `0x${string}` = "0x", to: string = FRIEND) =>
    (await agent.callTool({
      name: "send_transaction",
      arguments: { credential_id: credentialId, chain_id: chain.chainId, to, value: String(parseEther(ether)), data },
    })) as Reply;

  it("native caps: the amount, the wallet, what is left today and when it resets, in ETH", async () => {
    await withPolicy({ native: { per_transaction: String(parseEther("0.5")), per_day: String(parseEther("0.5")) } });
    const tooBig = await send("0.6");
    assert.equal(tooBig.isError, true);
    assert.equal(tooBig.content?.[0]?.text, "Refused by the spending policy: 0.6 ETH is over your limit of 0.5 ETH a transaction for Main");
    const first = await send("0.3");
    assert.ok(!first.isError, first.content?.[0]?.text);
    const created = (await db().agentRequest.findUniqueOrThrow({ where: { id: String(first.structuredContent?.request_id) } })).createdAt;
    const refused = await send("0.3");
    assert.equal(
      refused.content?.[0]?.text,
      "Refused by the spending policy: 0.3 ETH is over your limit of 0.5 ETH a day for Main; " +
        `0.2 ETH left until it resets ${dayAfter(created)}`,
    );
    // The person's audit log keeps the same words beside the rule.
    const audited = await db().auditEvent.findFirstOrThrow({ where: { type: "policy.refused", credentialId }, orderBy: { seq: "desc" } });
    assert.equal(JSON.parse(audited.data).words, refused.content?.[0]?.text?.replace("Refused by the spending policy: ", ""));
    // The machine-readable fields are the rule's own, in wei.
    assert.deepEqual(refused.structuredContent, {
      error: "policy_violation",
      rule: "native.per_day",
      allowance: { limit: String(parseEther("0.5")), remaining: String(parseEther("0.2")) },
    });
  });

  it("token caps: in the token's units with its symbol", async () => {
    await db().agentRequest.updateMany({ where: { grantId, status: "pending" }, data: { status: "cancelled" } });
    await withPolicy({
      tokens: [{ chain_id: chain.chainId, token, per_transaction: String(parseEther("25")), per_day: String(parseEther("30")) }],
    });
    const transfer = (amount: string) =>
      send("0", encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [FRIEND, parseEther(amount)] }), token);
    const tooBig = await transfer("25.5");
    assert.equal(
      tooBig.content?.[0]?.text,
      "Refused by the spending policy: 25.5 TUSD is over your limit of 25 TUSD a transaction for Main",
    );
    const first = await transfer("20");
    assert.ok(!first.isError, first.content?.[0]?.text);
    const created = (await db().agentRequest.findUniqueOrThrow({ where: { id: String(first.structuredContent?.request_id) } })).createdAt;
    const refused = await transfer("12.5");
    assert.equal(
      refused.content?.[0]?.text,
      "Refused by the spending policy: 12.5 TUSD is over your limit of 30 TUSD a day for Main; " +
        `10 TUSD left until it resets ${dayAfter(created)}`,
    );
    assert.equal(refused.structuredContent?.rule, "tokens.per_day");
    assert.deepEqual(refused.structuredContent?.allowance, { limit: String(parseEther("30")), remaining: String(parseEther("10")) });
  });
});
