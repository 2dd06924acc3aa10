// The agent's side of an allowance, through the real MCP SDK client against the started app on a hardhat chain with
// the Delegation Framework: the person signed the allowance with their own key; payments within it complete with no
// one at a browser, above it they go to the person (`ask`) or are refused in the person's units (`refuse`).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseEther, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RunningApp } from "../support/app";
import type { LocalChain } from "../support/chain";
import { agentOverMcp, signAllowanceFor, startAllowanceApp, type AllowanceApp } from "../support/allowances";
import { db } from "@/lib/db";
import type { AllowanceOutput, RequestView } from "@/contract";

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { type: string; text: string }[] };

describe("allowances through MCP", { timeout: 300_000 }, () => {
  let world: AllowanceApp;
  let chain: LocalChain;
  let app: RunningApp;
  let recipient: AllowanceApp["recipient"];
  let relayerNonce: AllowanceApp["relayerNonce"];
  const clients: Client[] = [];

  before(async () => {
    ({ chain, app, recipient, relayerNonce } = world = await startAllowanceApp());
  });
  after(async () => {
    for (const client of clients) await client.close();
    await world?.stop();
  });

  /** A person with 1 ETH whose credential a new agent holds in `allowance` mode. */
  async function agentOf() {
    const agent = await agentOverMcp({ chain, app });
    clients.push(agent.client);
    return agent;
  }

  const ownerOf = ({ userId, grantId, credentialId }: { userId: string; grantId: string; credentialId: string }) => ({
    userId,
    grantId,
    credentialId,
  });

  async function send(agent: { client: Client; credentialId: string }, to: Address, ether: string) {
    return (await agent.client.callTool({
      name: "send_transaction",
      arguments: { credential_id: agent.credentialId, chain_id: chain.chainId, to, value: String(parseEther(ether)) },
    })) as ToolResult;
  }
  function view(result: ToolResult): RequestView {
    assert.notEqual(result.isError, true, result.content[0]?.text);
    return result.structuredContent as RequestView;
  }
  async function allowanceOf(agent: { client: Client; credentialId: string }) {
    const result = (await agent.client.callTool({ name: "get_allowance", arguments: { credential_id: agent.credentialId } })) as ToolResult;
    assert.notEqual(result.isError, true, result.content[0]?.text);
    return result.structuredContent as AllowanceOutput;
  }

  it("pays within the cap with no tap, then asks the person above it (ask); get_allowance says what is left", async () => {
    const agent = await agentOf();
    const shop = recipient();
    await signAllowanceFor(chain, agent.person, ownerOf(agent), {
      recipients: [shop],
      native: parseEther("0.01"),
      transactions: 5,
      overLimit: "ask",
    });

    for (let payment = 0; payment < 2; payment++) {
      const paid = view(await send(agent, shop, "0.004"));
      assert.equal(paid.status, "completed");
      assert.match(paid.reason ?? "", /Paid from the allowance/);
      const receipt = await chain.client.getTransactionReceipt({ hash: paid.tx_hash as `0x${string}` });
      assert.equal(receipt.status, "success");
    }
    assert.equal(await chain.client.getBalance({ address: shop }), parseEther("0.008"));
    assert.equal(await db().agentRequest.count({ where: { grantId: agent.grantId, status: "pending" } }), 0, "nothing reached the person");

    const listed = (await agent.client.callTool({ name: "list_requests", arguments: {} })) as ToolResult;
    const requests = (listed.structuredContent as { requests: RequestView[] }).requests;
    assert.deepEqual(
      requests.map((request) => request.status),
      ["completed", "completed"],
    );
    const fetched = (await agent.client.callTool({ name: "get_request", arguments: { request_id: requests[0].request_id } })) as ToolResult;
    assert.equal(view(fetched).tx_hash, requests[0].tx_hash);
    // submitted with its transaction before the broadcast, completed with its receipt: one event each
    const audited = await db().auditEvent.findMany({
      where: { type: "request.transition", requestId: requests[0].request_id },
      orderBy: { seq: "asc" },
    });
    assert.deepEqual(
      audited.map((event) => JSON.parse(event.data).to),
      ["submitted", "completed"],
    );
    // each payment's call is recorded once, naming the request it paid
    const calls = await db().auditEvent.findMany({
      where: { type: "mcp.tool_called", userId: agent.userId, data: { contains: '"send_transaction"' } },
      orderBy: { seq: "asc" },
    });
    assert.deepEqual(
      calls.map((call) => [call.requestId, JSON.parse(call.data).outcome]),
      [...requests].reverse().map((request) => [request.request_id, "ok"]),
    );
    const { summarizeEvent, namesFor } = await import("@/lib/audit/describe");
    const events = audited.map((event) => ({ ...event, data: JSON.parse(event.data) as Record<string, unknown> }));
    const names = await namesFor(agent.userId, events, {});
    assert.deepEqual(
      events.map((event) => summarizeEvent(event, names)),
      [
        `Sent 0.004 ETH to ${shop} from the allowance, without a tap: waiting for a block`,
        `Sent 0.004 ETH to ${shop} from the allowance, without a tap: included in a block`,
      ],
    );

    const left = await allowanceOf(agent);
    assert.equal(left.allowances.length, 1);
    assert.equal(left.allowances[0].limits[0].left, "0.002");
    assert.equal(left.allowances[0].limits[0].symbol, "ETH");
    // counted over the allowance's whole life, named so: it does not come back with the period
    assert.equal(left.allowances[0].limits[0].transfers_left_in_all, 3);
    assert.equal(left.allowances[0].limits[0].transfers_left, 3);
    assert.ok(left.allowances[0].limits[0].resets_at);

    const sent = await relayerNonce();
    const asked = view(await send(agent, shop, "0.004"));
    assert.equal(asked.status, "pending");
    // the agent hears why, and that the person's wallet would pay it and its fee
    assert.match(
      asked.reason ?? "",
      new RegExp(
        "^0\\.004 ETH is over your allowance of 0\\.01 ETH a day; " +
          "0\\.002 ETH left until it resets (at|on \\d+ \\w+ at) \\d\\d:\\d\\d UTC\\. " +
          "It waits for your approval; approved, your wallet pays it and its network fee\\.$",
      ),
    );
    assert.equal(await relayerNonce(), sent, "nothing was sent");
  });

  it("refuses above the cap in the person's units (refuse), and a recipient off either list before anything is sent", async () => {
    const agent = await agentOf();
    const shop = recipient();
    const stranger = recipient();
    await signAllowanceFor(chain, agent.person, ownerOf(agent), { recipients: [shop], native: parseEther("0.01"), overLimit: "refuse" });
    assert.equal(view(await send(agent, shop, "0.008")).status, "completed");

    const sent = await relayerNonce();
    const over = await send(agent, shop, "0.004");
    assert.equal(over.isError, true);
    assert.match(
      over.content[0].text,
      /^0\.004 ETH is over your allowance of 0\.01 ETH a day; 0\.002 ETH left until it resets (at|on \d+ \w+ at) \d\d:\d\d UTC\.$/,
    );

    const offList = await send(agent, stranger, "0.001");
    assert.equal(offList.isError, true);
    assert.match(offList.content[0].text, new RegExp(`${stranger} is not among this allowance's recipients`));

    // the spending policy applies first; the person changes it as on /clients, and the mode stays `allowance`
    const { changePolicy } = await import("@/lib/wallet/policy");
    await changePolicy(agent.userId, { grantId: agent.grantId, credentialId: agent.credentialId, policy: { recipients: [shop] } });
    const entry = await db().grantCredential.findUniqueOrThrow({
      where: { grantId_credentialId: { grantId: agent.grantId, credentialId: agent.credentialId } },
    });
    assert.equal(entry.mode, "allowance");
    const offPolicy = await send(agent, stranger, "0.001");
    assert.equal(offPolicy.isError, true);
    assert.equal(offPolicy.structuredContent?.rule, "recipients");
    assert.equal(offPolicy.content[0].text, `Refused by the spending policy: ${stranger} is not an allowed recipient`);

    assert.equal(await relayerNonce(), sent, "nothing was sent");
    assert.equal(await chain.client.getBalance({ address: stranger }), 0n);
    assert.equal(await db().agentRequest.count({ where: { grantId: agent.grantId } }), 1, "only the payment was recorded");
  });

  it("checks the spending policy under its lock: of two concurrent payments only one fits a daily cap", async () => {
    const agent = await agentOf();
    const shop = recipient();
    await signAllowanceFor(chain, agent.person, ownerOf(agent), { recipients: [shop], native: parseEther("0.01"), overLimit: "refuse" });
    await db().grantCredential.update({
      where: { grantId_credentialId: { grantId: agent.grantId, credentialId: agent.credentialId } },
      data: { policy: JSON.stringify({ native: { per_day: String(parseEther("0.005")) } }) },
    });
    const sent = await relayerNonce();
    const results = await Promise.all([send(agent, shop, "0.004"), send(agent, shop, "0.004")]);
    const paid = results.filter((result) => !result.isError);
    const refused = results.filter((result) => result.isError);
    assert.equal(paid.length, 1, "one payment fits the policy's cap");
    assert.equal(view(paid[0]).status, "completed");
    assert.equal(refused[0].structuredContent?.rule, "native.per_day");
    assert.match(
      refused[0].content[0].text,
      /^Refused by the spending policy: 0\.004 ETH is over your limit of 0\.005 ETH a day for Main; /,
    );
    assert.equal(await relayerNonce(), sent + 1, "only the payment that fits was sent");
    assert.equal(await chain.client.getBalance({ address: shop }), parseEther("0.004"));
    assert.equal(await db().agentRequest.count({ where: { grantId: agent.grantId } }), 1, "the refused payment left nothing behind");
  });

  it("refuses a payment from an allowance whose key the agent holds (agent_signs_payments), above it asks the person", async () => {
    const agent = await agentOf();
    const shop = recipient();
    const agentKey = privateKeyToAccount(generatePrivateKey()).address;
    await signAllowanceFor(chain, agent.person, ownerOf(agent), {
      recipients: [shop],
      native: parseEther("0.01"),
      overLimit: "ask",
      delegate: agentKey,
    });
    const sent = await relayerNonce();
    const refused = await send(agent, shop, "0.004");
    assert.equal(refused.isError, true);
    assert.deepEqual(refused.structuredContent, { error: "agent_signs_payments" });
    assert.match(refused.content[0].text, /^This allowance's key is held by the agent, which signs its own payments/);
    assert.equal(await relayerNonce(), sent, "nothing was sent");
    assert.equal(await db().agentRequest.count({ where: { grantId: agent.grantId } }), 0, "nothing was held");
    // what is left still reads; a payment the allowance does not cover is the person's own, which needs no delegate key
    assert.equal((await allowanceOf(agent)).allowances[0].limits[0].left, "0.01");
    const asked = view(await send(agent, shop, "0.02"));
    assert.equal(asked.status, "pending");
    assert.equal(await chain.client.getBalance({ address: shop }), 0n);
  });

  it("with no live allowance, a payment goes to the person", async () => {
    const agent = await agentOf();
    assert.equal(view(await send(agent, recipient(), "0.001")).status, "pending");
    assert.deepEqual((await allowanceOf(agent)).allowances, []);
  });
});
