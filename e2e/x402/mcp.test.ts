// pay_x402 through the real MCP SDK client against the started app: an agent pays a resource built with the real
// `@x402/express` from its person's USDC allowance with no tap and reads the resource; above what is left it hears what
// is left and when it resets; the SDK pays a paid MCP tool built with the MCP SDK (x402's MCP transport); an `approve`
// credential hears that erc7710 is paid only within an allowance (its one-tap eip3009 payments: one-tap.test.ts).
import net from "node:net";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseAbi, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { apiKeyHolding, signAllowanceFor } from "../support/allowances";
import { mintFiatToken } from "../support/contracts";
import { connectWithBearer } from "../support/mcp-client";
import { obtainTokens } from "../support/oauth";
import { requirementHeader, startX402App } from "../support/x402";
import type { Erc7710Facilitator } from "../support/x402-facilitator";
import { startPaidResource, type PaidResource } from "../support/x402-resource";
import { db } from "@/lib/db";
import { randomId } from "@/lib/crypto";
import { cliEnv, runCli, startCliInTerminal } from "../support/cli";
import type { ToolOutput } from "@/contract";
import { AgentWalletClient, callPaidTool, payingFetch } from "agent-wallet/sdk";
import { paidToolClient, startPaidMcpTool } from "../support/x402-mcp-tool";

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { type: string; text: string }[] };

const PRICE = 10_000n;

describe("pay_x402 through MCP", { timeout: 300_000 }, () => {
  let world: Awaited<ReturnType<typeof startX402App>>;
  let token: Address;
  let facilitator: Erc7710Facilitator;
  let clients: { close: () => Promise<void> }[];
  let resources: PaidResource[];

  before(async () => {
    ({ token, facilitator, clients, resources } = world = await startX402App());
  });
  after(() => world?.stop());

  const balanceOf = (address: Address) =>
    world.chain.client.readContract({
      address: token,
      abi: parseAbi(["function balanceOf(address) view returns (uint256)"]),
      functionName: "balanceOf",
      args: [address],
    });

  /** A person holding 1 USDC whose credential a new agent holds in `mode`. */
  async function agentOf(mode: "allowance" | "approve") {
    const person: PrivateKeyAccount = privateKeyToAccount(generatePrivateKey());
    await world.chain.fund(person.address, "1");
    await mintFiatToken(world.chain, token, person.address, 1_000_000n);
    let credentialId = "";
    const flow = await obtainTokens(world.app, {
      credentials: async (userId) => {
        credentialId = (
          await db().credential.create({ data: { id: randomId("cr_"), userId, name: "Main", kind: "evm", address: person.address } })
        ).id;
        return [{ credentialId, mode: "approve" }];
      },
    });
    await db().grantCredential.update({ where: { grantId_credentialId: { grantId: flow.grantId, credentialId } }, data: { mode } });
    const client = await connectWithBearer(world.app.baseUrl, flow.tokens.access_token);
    clients.push(client);
    return { person, userId: flow.user.id, grantId: flow.grantId, credentialId, client, accessToken: flow.tokens.access_token };
  }

  async function paidResource(payTo: Address) {
    const resource = await startPaidResource({
      facilitator,
      chainId: world.chain.chainId,
      token,
      payTo,
      amount: PRICE,
      description: "A report",
    });
    resources.push(resource);
    const unpaid = await fetch(resource.url);
    assert.equal(unpaid.status, 402);
    return { resource, required: unpaid.headers.get("payment-required")! };
  }

  /** An agent whose person signed it an allowance of 0.015 USDC a day to a shop, at most 5 payments. */
  async function agentWithAllowance() {
    const agent = await agentOf("allowance");
    const shop = world.recipient();
    await signAllowanceFor(
      world.chain,
      agent.person,
      { userId: agent.userId, grantId: agent.grantId, credentialId: agent.credentialId },
      { recipients: [shop], native: undefined, tokens: [{ address: token, perPeriod: 15_000n }], transactions: 5, overLimit: "refuse" },
    );
    return { agent, shop };
  }

  const pay = async (agent: { client: Client; credentialId: string }, required: string) =>
    (await agent.client.callTool({
      name: "pay_x402",
      arguments: { credential_id: agent.credentialId, payment_required: required },
    })) as ToolResult;

  it("pays within the allowance with no tap; above what is left it is refused with what is left and when it resets", async () => {
    const { agent, shop } = await agentWithAllowance();
    const { resource, required } = await paidResource(shop);

    const result = await pay(agent, required);
    assert.notEqual(result.isError, true, result.content[0]?.text);
    const paid = result.structuredContent as ToolOutput<"pay_x402">;
    assert.equal(paid.header, "PAYMENT-SIGNATURE");
    assert.deepEqual(paid.paid.formatted, "0.01");
    assert.equal(paid.payee, shop);
    assert.deepEqual(paid.resource, { url: resource.url, description: "A report" });
    const response = await fetch(resource.url, { headers: { [paid.header!]: paid.value! } });
    assert.equal(response.status, 200, facilitator.lastRefusal() ?? undefined);
    assert.equal(await balanceOf(shop), PRICE);
    // the audit log has the payment and the call that made it, once, both naming the payment's request
    const events = await db().auditEvent.findMany({
      where: { userId: agent.userId, type: { in: ["allowance.spent", "mcp.tool_called"] } },
      orderBy: { seq: "asc" },
    });
    assert.deepEqual(
      events.map((event) => [event.type, event.requestId, JSON.parse(event.data).outcome]),
      [
        ["allowance.spent", events[0].requestId, "signed"],
        ["mcp.tool_called", events[0].requestId, "ok"],
      ],
    );
    assert.match(events[0].requestId ?? "", /^rq_/);

    const refused = await pay(agent, (await paidResource(shop)).required);
    assert.equal(refused.isError, true);
    const over =
      /^0\.01 USDC is over your allowance of 0\.015 USDC a day; 0\.005 USDC left until it resets (at|on \d+ \w+ at) \d\d:\d\d UTC\./;
    assert.match(refused.content[0].text, over);
    assert.match(refused.content[0].text, / Nothing was signed\.$/);
    const left = (refused.structuredContent as { error: string; left: { available: string; symbol: string; resetsAt: string } }).left;
    assert.equal((refused.structuredContent as { error: string }).error, "allowance_refused");
    assert.equal(left.available, "5000");
    assert.equal(left.symbol, "USDC");
  });

  it("the SDK's payingFetch answers the 402 through pay_x402 and retries with the payment", async () => {
    const { agent, shop } = await agentWithAllowance();
    const { resource } = await paidResource(shop);
    const wallet = new AgentWalletClient({ baseUrl: world.app.baseUrl, accessToken: agent.accessToken });
    const payments: ToolOutput<"pay_x402">[] = [];
    const paying = payingFetch(wallet, { credentialId: agent.credentialId, onPayment: (payment) => payments.push(payment) });
    const response = await paying(resource.url);
    assert.equal(response.status, 200, facilitator.lastRefusal() ?? undefined);
    assert.deepEqual(await response.json(), { report: "paid content" });
    assert.equal(payments.length, 1);
    assert.equal(payments[0].paid.formatted, "0.01");
    assert.equal(payments[0].payee, shop);
  });

  /**
   * The CLI's environment for a script holding a personal API key (named `name`) of a person holding 1 USDC, who gave
   * it an allowance of 0.015 USDC a day to a shop; and the shop's resource.
   */
  async function cliPayingForReports(name: string) {
    const person = privateKeyToAccount(generatePrivateKey());
    await world.chain.fund(person.address, "1");
    await mintFiatToken(world.chain, token, person.address, 1_000_000n);
    const { apiKey, ...owner } = await apiKeyHolding(person.address, name);
    const shop = world.recipient();
    await signAllowanceFor(world.chain, person, owner, {
      recipients: [shop],
      native: undefined,
      tokens: [{ address: token, perPeriod: 15_000n }],
      transactions: 5,
      overLimit: "refuse",
    });
    const { resource } = await paidResource(shop);
    return { env: cliEnv({ AGENT_WALLET_API_KEY: apiKey, AGENT_WALLET_URL: world.app.baseUrl }).env, shop, resource };
  }

  it("the CLI's pay fetches the URL, pays the 402 within the allowance and prints the body", async () => {
    const { env, shop, resource } = await cliPayingForReports("Paying script");
    const result = await runCli(["pay", "Main", resource.url], env);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), { report: "paid content" });
    const escaped = resource.url.replace(/[.]/g, "\\.");
    // the spinner's text once (stderr is no terminal), then what was paid: the address and the URL each begin a line
    assert.match(result.stderr, new RegExp(`^Fetching ${escaped}\n(.*\n)*Paid 0\\.01 USDC to ${shop}\nfor ${escaped}\n$`));
  });

  it("the CLI pay at 80 columns: a spinner, no line past 80 columns; an unreachable URL named with its host and why", async () => {
    const { env, shop, resource } = await cliPayingForReports("Paying at a terminal");
    const run = startCliInTerminal(["pay", "Main", resource.url], env, 80);
    const result = await run.result;
    assert.equal(result.code, 0, result.stdout);
    assert.match(result.stdout, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Fetching http:/, "a spinner while it fetches and pays");
    const lines = result.stdout
      .replace(/\u001b\[[0-9;?]*[A-Za-z]/g, "")
      .split(/\r\n|\r|\n/)
      .filter(Boolean);
    assert.deepEqual(
      lines.filter((line) => [...line].length > 80),
      [],
      "no line wraps at 80 columns",
    );
    assert.ok(lines.includes(`Paid 0.01 USDC to ${shop}`) && lines.includes(`for ${resource.url}`), lines.join("\n"));

    // a port nothing listens on
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as net.AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const down = await runCli(["pay", "Main", `http://127.0.0.1:${port}/report`], env);
    assert.equal(down.code, 5, down.stderr);
    const refused = "the connection was refused \\(nothing listens there\\) \\(ECONNREFUSED\\)";
    assert.match(down.stderr, new RegExp(`^agent-wallet: Could not reach 127\\.0\\.0\\.1:${port}: ${refused}\\. Nothing was paid\\.`, "m"));
    assert.doesNotMatch(down.stderr, /Unexpected error|fetch failed/);
  });

  it("refuses a requirement in no token it can read, or of 2^256, as a tool error naming it, with nothing asked or signed", async () => {
    const approving = await agentOf("approve");
    const { agent: allowed, shop } = await agentWithAllowance();
    const asking = (asset: Address, amount: bigint) =>
      requirementHeader({
        chainId: world.chain.chainId,
        asset,
        amount: amount.toString(),
        payTo: shop,
        extra: { name: "USD Coin", version: "2" },
      });
    for (const agent of [approving, allowed]) {
      const noToken = await pay(agent, asking(world.recipient(), PRICE));
      assert.equal(noToken.isError, true);
      assert.match(noToken.content[0].text, /asks to be paid in 0x[0-9a-fA-F]{40} on chain \d+, which is no token Agent Wallet can read/);
      const huge = await pay(agent, asking(token, 2n ** 256n));
      assert.equal(huge.isError, true);
      assert.match(huge.content[0].text, /accepts\.0\.amount must be less than 2\^256/);
      assert.equal(await db().agentRequest.count({ where: { grantId: agent.grantId } }), 0, "nothing asked of the person");
    }
  });

  it("the SDK's callPaidTool pays a paid MCP tool (x402's MCP transport) within the allowance, through the MCP SDK client", async () => {
    const { agent, shop } = await agentWithAllowance();
    const tool = await startPaidMcpTool({
      facilitator,
      chainId: world.chain.chainId,
      token,
      payTo: shop,
      amount: PRICE,
      description: "A forecast",
    });
    resources.push(tool);
    const weather = await paidToolClient(tool);
    clients.push(weather);
    const { call } = weather;
    const forecast = { name: "forecast", arguments: { city: "Lisbon" } };

    const unpaid = await call(forecast);
    assert.equal(unpaid.isError, true);
    assert.equal(unpaid.structuredContent?.x402Version, 2, "the requirement in structuredContent");

    const wallet = new AgentWalletClient({ baseUrl: world.app.baseUrl, accessToken: agent.accessToken });
    const payments: ToolOutput<"pay_x402">[] = [];
    const paid = await callPaidTool(wallet, call, forecast, {
      credentialId: agent.credentialId,
      onPayment: (payment) => payments.push(payment),
    });
    assert.notEqual(paid.isError, true, paid.content[0]?.text ?? facilitator.lastRefusal() ?? undefined);
    assert.equal(paid.content[0].text, "Sunny in Lisbon");
    assert.equal((paid._meta?.["x402/payment-response"] as { success: boolean }).success, true);
    assert.equal(payments.length, 1);
    assert.deepEqual(payments[0].resource, { url: "mcp://paid-weather/tools/forecast", description: "A forecast" });
    assert.equal(await balanceOf(shop), PRICE);
  });

  it("with an approve credential, an erc7710-only resource is refused: erc7710 is paid only within an allowance", async () => {
    const agent = await agentOf("approve");
    const result = await pay(agent, (await paidResource(world.recipient())).required);
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /by erc7710, which Agent Wallet pays only within an allowance \(ask the person for one\)/);
  });
});
