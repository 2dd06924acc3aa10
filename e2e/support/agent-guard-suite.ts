// The agent's own side of an x402 payment (decision 0036), on either database: the SDK's payingFetch and callPaidTool
// and the CLI's `pay`, against the started app and paid resources of the real `@x402/express` and MCP SDK, refuse a
// requirement above the most per payment, one for another resource than the one fetched or the tool called, and one
// `beforePay` refuses, with nothing signed: pay_x402 is never called (no payment, no request, no call in the audit
// log) and the shop is paid nothing. The same payment within the most is paid, so each refusal is the check's own.
import http from "node:http";
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { parseAbi, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import {
  AgentWalletClient,
  callPaidTool,
  PaymentRefusedError,
  payingFetch,
  type McpToolCall,
  type PaymentRequirement,
} from "agent-wallet/sdk";
import { db } from "@/lib/db";
import { apiKeyHolding, signAllowanceFor } from "./allowances";
import { cliEnv, runCli } from "./cli";
import { mintFiatToken } from "./contracts";
import { startX402App } from "./x402";
import { paidToolClient, startPaidMcpTool } from "./x402-mcp-tool";
import { startPaidResource, type PaidResource } from "./x402-resource";

/** 0.2 USDC: above the default most of 0.10 a payment, within the allowance's 1 USDC a day. */
const DEAR = 200_000n;
const CHEAP = 10_000n;

export function agentGuardSuite(database: "sqlite" | "postgres") {
  describe(`the agent's own side pays only what it meant to (${database})`, { timeout: 300_000 }, () => {
    let world: Awaited<ReturnType<typeof startX402App>>;

    before(async () => {
      world = await startX402App(database);
    });
    after(() => world?.stop());

    const balanceOf = (address: Address) =>
      world.chain.client.readContract({
        address: world.token,
        abi: parseAbi(["function balanceOf(address) view returns (uint256)"]),
        functionName: "balanceOf",
        args: [address],
      });

    /** A script's personal API key for a person holding 1 USDC who allowed it 1 USDC a day to a shop; the SDK's client. */
    async function agent() {
      const person = privateKeyToAccount(generatePrivateKey());
      await world.chain.fund(person.address, "1");
      await mintFiatToken(world.chain, world.token, person.address, 1_000_000n);
      const { apiKey, ...owner } = await apiKeyHolding(person.address, "Guarded script");
      const shop = world.recipient();
      await signAllowanceFor(world.chain, person, owner, {
        recipients: [shop],
        native: undefined,
        tokens: [{ address: world.token, perPeriod: 1_000_000n }],
        transactions: 10,
        overLimit: "refuse",
      });
      const wallet = new AgentWalletClient({ baseUrl: world.app.baseUrl, apiKey });
      const env = cliEnv({ AGENT_WALLET_API_KEY: apiKey, AGENT_WALLET_URL: world.app.baseUrl }).env;
      return { ...owner, shop, wallet, env };
    }

    async function resource(shop: Address, amount: bigint): Promise<PaidResource> {
      const sale = { facilitator: world.facilitator, chainId: world.chain.chainId, token: world.token, payTo: shop, amount };
      const started = await startPaidResource({ ...sale, description: "A report" });
      world.resources.push(started);
      return started;
    }

    /** A page that answers with another resource's 402 as its own: its requirement names the other resource. */
    async function relaying(other: PaidResource): Promise<string> {
      const server = http.createServer(async (_request, response) => {
        const answer = await fetch(other.url);
        response.writeHead(answer.status, { "PAYMENT-REQUIRED": answer.headers.get("payment-required") ?? "" });
        response.end(await answer.text());
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      world.resources.push({ url: "", close: () => new Promise((resolve) => server.close(() => resolve())) });
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}/report`;
    }

    /** That nothing was signed or asked for the grant: no payment, no request, no pay_x402 call; the shop holds `paid`. */
    async function nothingSigned(owner: { grantId: string; userId: string; shop: Address }, paid = 0n) {
      const payments = await db().x402Payment.count({ where: { allowance: { grantId: owner.grantId } } });
      const requests = await db().agentRequest.count({ where: { grantId: owner.grantId } });
      const calls = await db().auditEvent.findMany({ where: { userId: owner.userId, type: "mcp.tool_called" } });
      const paying = calls.filter((event) => (JSON.parse(event.data) as { tool?: string }).tool === "pay_x402");
      assert.deepEqual({ payments, requests, payX402Calls: paying.length }, { payments: 0, requests: 0, payX402Calls: 0 });
      assert.equal(await balanceOf(owner.shop), paid);
    }

    const refused = (reason: string, pattern: RegExp) => (error: unknown) => {
      assert.ok(error instanceof PaymentRefusedError, String(error));
      assert.equal(error.reason, reason);
      assert.match(error.message, pattern);
      assert.match(error.message, /Nothing was signed\.$/);
      return true;
    };

    it("payingFetch: above the most (by default 0.10) refused with nothing signed; within a most it names, paid", async () => {
      const owner = await agent();
      const dear = await resource(owner.shop, DEAR);
      const url = dear.url.replace(/[.]/g, "\\.");
      await assert.rejects(
        payingFetch(owner.wallet, { credentialId: owner.credentialId })(dear.url),
        refused("over_max", new RegExp(`^Refused to pay ${url}: it asks 0\\.2 USDC, more than the most of 0\\.10 USDC a payment`)),
      );
      await assert.rejects(
        payingFetch(owner.wallet, { credentialId: owner.credentialId, maxPerPayment: { USDC: "0.19" } })(dear.url),
        refused("over_max", /it asks 0\.2 USDC, more than the most of 0\.19 USDC a payment/),
      );
      await assert.rejects(
        payingFetch(owner.wallet, { credentialId: owner.credentialId, maxPerPayment: { EURC: "5" } })(dear.url),
        refused("no_max", /it asks 0\.2 USDC \(0x[0-9a-fA-F]{40}\), a token with no most given \(given for: EURC\)/),
      );
      await nothingSigned(owner);

      const paid = await payingFetch(owner.wallet, { credentialId: owner.credentialId, maxPerPayment: { [world.token]: "0.2" } })(dear.url);
      assert.equal(paid.status, 200, world.facilitator.lastRefusal() ?? undefined);
      assert.equal(await balanceOf(owner.shop), DEAR);
    });

    it("payingFetch: a requirement for another resource is refused with nothing signed, whatever its price", async () => {
      const owner = await agent();
      const other = await resource(owner.shop, CHEAP);
      const page = await relaying(other);
      assert.equal((await fetch(page)).status, 402, "the page asks to be paid");
      await assert.rejects(
        payingFetch(owner.wallet, { credentialId: owner.credentialId })(page),
        refused("other_resource", new RegExp(`it is for "${other.url.replace(/[.]/g, "\\.")}", not ${page.replace(/[.]/g, "\\.")}`)),
      );
      await nothingSigned(owner);
      // the same requirement fetched from its own resource is paid
      assert.equal((await payingFetch(owner.wallet, { credentialId: owner.credentialId })(other.url)).status, 200);
      assert.equal(await balanceOf(owner.shop), CHEAP);
    });

    it("beforePay sees what would be paid, in whole tokens, and its no is a refusal with nothing signed", async () => {
      const owner = await agent();
      const cheap = await resource(owner.shop, CHEAP);
      const seen: PaymentRequirement[] = [];
      const hook = (requirement: PaymentRequirement) => (seen.push(requirement), false);
      await assert.rejects(
        payingFetch(owner.wallet, { credentialId: owner.credentialId, beforePay: hook })(cheap.url),
        refused("refused_by_hook", /beforePay said no/),
      );
      assert.equal(seen.length, 1);
      assert.equal(seen[0].resource.url, cheap.url);
      assert.deepEqual(
        seen[0].accepts.map(({ formatted, symbol, payTo, chainId, most }) => ({ formatted, symbol, payTo, chainId, most })),
        [{ formatted: "0.01", symbol: "USDC", payTo: owner.shop, chainId: world.chain.chainId, most: "0.10" }],
      );
      await nothingSigned(owner);
    });

    it("callPaidTool: another tool's requirement, one above the most, and the hook's no are refused with nothing signed", async () => {
      const owner = await agent();
      const sale = { facilitator: world.facilitator, chainId: world.chain.chainId, token: world.token, payTo: owner.shop };
      const tool = await startPaidMcpTool({ ...sale, amount: CHEAP, description: "A forecast" });
      world.resources.push(tool);
      const weather = await paidToolClient(tool);
      world.clients.push(weather);
      const forecast = { name: "forecast", arguments: { city: "Lisbon" } };
      const options = { credentialId: owner.credentialId };
      await assert.rejects(
        callPaidTool(owner.wallet, weather.call, forecast, { ...options, resource: "mcp://other-weather/tools/forecast" }),
        refused("other_resource", /Refused to pay the tool "forecast": it is for "mcp:\/\/paid-weather\/tools\/forecast"/),
      );
      // a call of the tool by another name the server answers with the forecast's requirement
      const renamed = (params: McpToolCall) => weather.call({ ...params, name: "forecast" });
      await assert.rejects(
        callPaidTool(owner.wallet, renamed, { ...forecast, name: "transfer" }, options),
        refused("other_resource", /the tool "transfer"/),
      );
      await assert.rejects(
        callPaidTool(owner.wallet, weather.call, forecast, { ...options, maxPerPayment: { USDC: "0.005" } }),
        refused("over_max", /it asks 0\.01 USDC, more than the most of 0\.005 USDC a payment/),
      );
      await assert.rejects(
        callPaidTool(owner.wallet, weather.call, forecast, { ...options, beforePay: () => false }),
        refused("refused_by_hook", /beforePay said no/),
      );
      await nothingSigned(owner);
      const paid = await callPaidTool(owner.wallet, weather.call, forecast, options);
      assert.equal(paid.content[0].text, "Sunny in Lisbon");
      assert.equal(await balanceOf(owner.shop), CHEAP);
    });

    it("the CLI's pay: above --max (0.10 by default), or for another URL, exits 6 with one line, nothing signed", async () => {
      const owner = await agent();
      const dear = await resource(owner.shop, DEAR);
      const page = await relaying(dear);
      const oneLine = (stderr: string, pattern: RegExp) => {
        const lines = stderr.split("\n").filter(Boolean);
        assert.equal(lines.filter((line) => line.startsWith("agent-wallet: ")).length, 1, stderr);
        assert.match(lines.at(-1)!, pattern);
      };

      const over = await runCli(["pay", "Main", dear.url], owner.env);
      assert.equal(over.code, 6, over.stderr);
      const overMost =
        /^agent-wallet: Refused to pay .*: it asks 0\.2 USDC, more than the most of 0\.10 USDC a payment\. Nothing was signed\./;
      oneLine(over.stderr, new RegExp(`${overMost.source} Run again with --max`));
      const under = await runCli(["pay", "Main", dear.url, "--max", "0.15 USDC", "--json"], owner.env);
      assert.equal(under.code, 6, under.stderr);
      const { error } = JSON.parse(under.stderr) as { error: { exitCode: number; message: string; details: unknown } };
      assert.deepEqual({ ...error, message: undefined }, { exitCode: 6, message: undefined, details: { reason: "over_max" } });
      assert.match(error.message, /more than the most of 0\.15 USDC a payment/);
      const elsewhere = await runCli(["pay", "Main", page, "--max", "1 USDC"], owner.env);
      assert.equal(elsewhere.code, 6, elsewhere.stderr);
      oneLine(
        elsewhere.stderr,
        /it is for ".*", not http:.*\. Nothing was signed\. Check the URL: only a requirement for the URL given is paid\.$/,
      );
      const bad = await runCli(["pay", "Main", dear.url, "--max", "lots"], owner.env);
      assert.equal(bad.code, 1, bad.stderr);
      assert.match(bad.stderr, /--max takes an amount and a token, such as "0\.50 USDC" \("lots" is not one\)/);
      await nothingSigned(owner);

      const paid = await runCli(["pay", "Main", dear.url, "--max", "0.20 USDC"], owner.env);
      assert.equal(paid.code, 0, paid.stderr);
      assert.match(paid.stderr, new RegExp(`Paid 0\\.2 USDC to ${owner.shop}\n`));
      assert.equal(await balanceOf(owner.shop), DEAR);
    });
  });
}
