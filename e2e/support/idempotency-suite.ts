// Idempotency keys (issue 55) through the real MCP SDK client against the started app on a hardhat chain, on SQLite
// (e2e/mcp/idempotency.test.ts) and PostgreSQL (e2e/postgres/idempotency.test.ts): a payment from an allowance retried
// with its key answers the first call's request and the chain shows one transfer, also while the first call is still
// being paid and when the calls are sent at once; pay_x402 retried answers the same payment, with one hold; the key
// with other arguments is refused in the tool's error and nothing new is made; two clients' keys never meet; the SDK
// sends a payment again with its key when the answer is lost, and the CLI's --idempotency-key runs a command again safely.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { parseEther, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { AgentWalletClient, type FetchLike } from "agent-wallet/sdk";
import { agentHolding, agentOverMcp, apiKeyHolding, signAllowanceFor } from "./allowances";
import { cliEnv, runCli } from "./cli";
import { mintFiatToken } from "./contracts";
import { startX402App } from "./x402";
import { startPaidResourceAsking } from "./x402-resource";
import { db } from "@/lib/db";
import type { RequestView, ToolOutput } from "@/contract";

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { type: string; text: string }[] };
type Agent = Awaited<ReturnType<typeof agentOverMcp>>;

const PRICE = 10_000n;

export function idempotencySuite(database: "sqlite" | "postgres") {
  describe(`idempotency keys of payments and signatures (${database})`, { timeout: 300_000 }, () => {
    let world: Awaited<ReturnType<typeof startX402App>>;
    before(async () => (world = await startX402App(database)));
    after(() => world?.stop());

    /** A person with 1 ETH whose credential a new agent holds in `allowance` mode, with an allowance of 0.01 ETH a day to `shop`. */
    async function payingAgent(shop: Address) {
      const agent = await agentOverMcp(world);
      world.clients.push(agent.client);
      const owner = { userId: agent.userId, grantId: agent.grantId, credentialId: agent.credentialId };
      await signAllowanceFor(world.chain, agent.person, owner, {
        recipients: [shop],
        native: parseEther("0.01"),
        tokens: [{ address: world.token, perPeriod: 100_000n }],
        transactions: 10,
        overLimit: "refuse",
      });
      return agent;
    }

    async function send(agent: Agent, to: Address, ether: string, key?: string) {
      return (await agent.client.callTool({
        name: "send_transaction",
        arguments: {
          credential_id: agent.credentialId,
          chain_id: world.chain.chainId,
          to,
          value: String(parseEther(ether)),
          ...(key !== undefined && { idempotency_key: key }),
        },
      })) as ToolResult;
    }
    function view(result: ToolResult): RequestView {
      assert.notEqual(result.isError, true, result.content[0]?.text);
      return result.structuredContent as RequestView;
    }
    const requestsOf = (agent: Agent) => db().agentRequest.findMany({ where: { grantId: agent.grantId }, orderBy: { createdAt: "asc" } });
    const balance = (address: Address) => world.chain.client.getBalance({ address });
    /** The outcome of each of the agent's calls of `tool`, as the audit log has them, with the request each names. */
    async function callsOf(agent: Agent, tool: string) {
      const events = await db().auditEvent.findMany({
        where: { type: "mcp.tool_called", userId: agent.userId, data: { contains: `"${tool}"` } },
        orderBy: { seq: "asc" },
      });
      return events.map((event) => [event.requestId, (JSON.parse(event.data) as { outcome: string }).outcome]);
    }

    it("a payment from an allowance retried with its key answers the first call's request: one transfer on chain", async () => {
      const shop = world.recipient();
      const agent = await payingAgent(shop);
      const key = randomUUID();
      const sent = await world.relayerNonce();
      const first = view(await send(agent, shop, "0.004", key));
      assert.equal(first.status, "completed");
      assert.match(first.reason ?? "", /Paid from the allowance/);

      const retried = view(await send(agent, shop, "0.004", key));
      assert.deepEqual(retried, first, "the first call's request, as it stands");
      assert.equal(await world.relayerNonce(), sent + 1, "one transaction");
      assert.equal(await balance(shop), parseEther("0.004"), "paid once");
      const requests = await requestsOf(agent);
      assert.deepEqual(
        requests.map((request) => [request.id, request.idempotencyTool, request.idempotencyKey]),
        [[first.request_id, "send_transaction", key]],
      );
      assert.deepEqual(await callsOf(agent, "send_transaction"), [
        [first.request_id, "ok"],
        [first.request_id, "replayed"],
      ]);

      // a payment without a key is a payment each time
      view(await send(agent, shop, "0.001"));
      view(await send(agent, shop, "0.001"));
      assert.equal(await world.relayerNonce(), sent + 3);
    });

    it("a retry while the first call is still being paid waits for it and answers the same request", async () => {
      const shop = world.recipient();
      const agent = await payingAgent(shop);
      const key = randomUUID();
      const sent = await world.relayerNonce();
      const { first, retried } = await world.chain.holdingBlocks(async () => {
        const first = send(agent, shop, "0.003", key);
        // the relayer's transaction waits in the mempool: the request is submitted, its call not answered yet
        const deadline = Date.now() + 20_000;
        while (!(await db().agentRequest.findFirst({ where: { grantId: agent.grantId, status: "submitted" } }))) {
          assert.ok(Date.now() < deadline, "the payment was never submitted");
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const retried = send(agent, shop, "0.003", key);
        // the retry has reached the server and waits for the first call's receipt
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        return { first, retried };
      });
      const [one, two] = [view(await first), view(await retried)];
      assert.equal(one.status, "completed");
      assert.deepEqual(two, one);
      assert.equal(await world.relayerNonce(), sent + 1, "one transaction");
      assert.equal(await balance(shop), parseEther("0.003"), "paid once");
      assert.equal((await requestsOf(agent)).length, 1);
    });

    it("calls sent at once with one key make one request and one transfer", async () => {
      const shop = world.recipient();
      const agent = await payingAgent(shop);
      const key = randomUUID();
      const sent = await world.relayerNonce();
      const results = await Promise.all(Array.from({ length: 4 }, () => send(agent, shop, "0.002", key)));
      const views = results.map(view);
      assert.deepEqual(new Set(views.map((each) => each.request_id)).size, 1, "one request for all four calls");
      for (const each of views) assert.deepEqual(each, views[0]);
      assert.equal(views[0].status, "completed");
      assert.equal(await world.relayerNonce(), sent + 1, "one transaction");
      assert.equal(await balance(shop), parseEther("0.002"), "paid once");
      assert.equal((await requestsOf(agent)).length, 1);
      assert.deepEqual((await callsOf(agent, "send_transaction")).map(([, outcome]) => outcome).sort(), [
        "ok",
        "replayed",
        "replayed",
        "replayed",
      ]);
    });

    it("the key with other arguments is refused in the tool's error and nothing new is made; a key is each tool's own", async () => {
      const shop = world.recipient();
      const agent = await payingAgent(shop);
      const key = randomUUID();
      const first = view(await send(agent, shop, "0.001", key));
      const sent = await world.relayerNonce();
      const events = await db().auditEvent.count({ where: { type: { not: "mcp.tool_called" }, userId: agent.userId } });

      for (const other of [() => send(agent, shop, "0.002", key), () => send(agent, world.recipient(), "0.001", key)]) {
        const refused = await other();
        assert.equal(refused.isError, true);
        assert.equal(
          refused.content[0].text,
          `idempotency_key ${JSON.stringify(key)} was used with other arguments: send_transaction answered it with request ` +
            `${first.request_id}. Nothing was done; give each new call a new key`,
        );
        assert.deepEqual(refused.structuredContent, { error: "idempotency_key_reused", request_id: first.request_id });
      }
      assert.equal(await world.relayerNonce(), sent, "nothing was sent");
      assert.equal(await balance(shop), parseEther("0.001"));
      assert.equal((await requestsOf(agent)).length, 1, "no request was made");
      assert.equal(
        await db().auditEvent.count({ where: { type: { not: "mcp.tool_called" }, userId: agent.userId } }),
        events,
        "nothing but the refused calls was recorded",
      );

      // the same key for sign_message is that tool's: a request of its own, and its retry answers it
      const sign = async (message: string) =>
        (await agent.client.callTool({
          name: "sign_message",
          arguments: { credential_id: agent.credentialId, message, idempotency_key: key },
        })) as ToolResult;
      const asked = view(await sign("hello"));
      assert.equal(asked.status, "pending");
      assert.notEqual(asked.request_id, first.request_id);
      assert.deepEqual(view(await sign("hello")), asked);
      assert.equal((await sign("goodbye")).structuredContent?.error, "idempotency_key_reused");
      assert.equal((await requestsOf(agent)).length, 2);
    });

    it("two clients' keys never meet: the same key pays once for each", async () => {
      const shop = world.recipient();
      const [alice, bob] = [await payingAgent(shop), await payingAgent(shop)];
      const key = randomUUID();
      const sent = await world.relayerNonce();
      const [paidByAlice, paidByBob] = (await Promise.all([send(alice, shop, "0.001", key), send(bob, shop, "0.001", key)])).map(view);
      assert.equal(paidByAlice.status, "completed");
      assert.equal(paidByBob.status, "completed");
      assert.notEqual(paidByAlice.request_id, paidByBob.request_id);
      assert.equal(await world.relayerNonce(), sent + 2);
      assert.equal(await balance(shop), parseEther("0.002"));
      // each retry answers its own client's payment
      assert.deepEqual(view(await send(alice, shop, "0.001", key)), paidByAlice);
      assert.deepEqual(view(await send(bob, shop, "0.001", key)), paidByBob);
      assert.equal(await world.relayerNonce(), sent + 2);
    });

    /** 1 USDC for `address`. */
    const mintUsdc = (address: Address) => mintFiatToken(world.chain, world.token, address, 1_000_000n);

    /** A resource selling a report to `shop` for 0.01 USDC, and the PAYMENT-REQUIRED of its 402. */
    async function report(shop: Address) {
      const sale = {
        facilitator: world.facilitator,
        chainId: world.chain.chainId,
        token: world.token,
        payTo: shop,
        amount: PRICE,
        description: "A report",
      };
      const asking = await startPaidResourceAsking(sale);
      world.resources.push(asking.resource);
      return asking;
    }

    it("pay_x402 retried, or sent at once, with one key answers one payment, held once", async () => {
      const shop = world.recipient();
      const agent = await payingAgent(shop);
      await mintUsdc(agent.person.address);
      const { resource, required } = await report(shop);
      const pay = async (key: string) =>
        (await agent.client.callTool({
          name: "pay_x402",
          arguments: { credential_id: agent.credentialId, payment_required: required, idempotency_key: key },
        })) as ToolResult;
      const answerOf = (result: ToolResult) => {
        assert.notEqual(result.isError, true, result.content[0]?.text);
        return result.structuredContent as ToolOutput<"pay_x402">;
      };
      const key = randomUUID();
      const first = answerOf(await pay(key));
      assert.equal(first.header, "PAYMENT-SIGNATURE");
      assert.deepEqual(answerOf(await pay(key)), first, "the same payment: the same header value");

      const another = randomUUID();
      const together = (await Promise.all(Array.from({ length: 4 }, () => pay(another)))).map(answerOf);
      for (const each of together) assert.deepEqual(each, together[0]);
      assert.notEqual(together[0].payment_id, first.payment_id);

      const holds = await db().x402Payment.findMany({ where: { payee: shop } });
      assert.deepEqual(holds.map((hold) => hold.id).sort(), [first.payment_id, together[0].payment_id].sort(), "two payments held");
      assert.equal((await requestsOf(agent)).length, 2);

      // the same key with another requirement (another resource's) is refused
      const { required: otherRequired } = await report(shop);
      const refused = (await agent.client.callTool({
        name: "pay_x402",
        arguments: { credential_id: agent.credentialId, payment_required: otherRequired, idempotency_key: key },
      })) as ToolResult;
      assert.equal(refused.structuredContent?.error, "idempotency_key_reused");
      assert.equal((await db().x402Payment.findMany({ where: { payee: shop } })).length, 2);

      // the payment answered twice is a real one, redeemed once
      const response = await fetch(resource.url, { headers: { [first.header!]: first.value! } });
      assert.equal(response.status, 200, world.facilitator.lastRefusal() ?? undefined);
    });

    it("the database decides between calls with one key that pass the check together: one payment, the other refused", async () => {
      // in this process, past the tool's lookup of the key: both calls reach their request's insert
      const { payFromAllowance } = await import("@/lib/allowances/agent");
      const { payX402 } = await import("@/lib/x402/pay");
      const { IdempotencyKeyTaken } = await import("@/lib/wallet/request-lifecycle");
      const { systemClock } = await import("@/lib/clock");
      const shop = world.recipient();
      const key = privateKeyToAccount(generatePrivateKey());
      await world.chain.fund(key.address, "1");
      await mintUsdc(key.address);
      const person = await agentHolding(key.address, "allowance", "In-process agent");
      await signAllowanceFor(world.chain, key, person, {
        recipients: [shop],
        native: parseEther("0.01"),
        tokens: [{ address: world.token, perPeriod: 100_000n }],
        transactions: 10,
        overLimit: "refuse",
      });
      const idempotency = (tool: "send_transaction" | "pay_x402") => ({ tool, key: randomUUID(), hash: "the same arguments" });
      const settledOf = async (calls: Promise<unknown>[]) => {
        const settled = await Promise.allSettled(calls);
        const refused = settled.filter((result) => result.status === "rejected");
        assert.equal(
          settled.length - refused.length,
          1,
          `one of them made its request: ${refused.map((result) => result.reason).join("; ")}`,
        );
        assert.ok(
          refused.every((result) => result.reason instanceof IdempotencyKeyTaken),
          String((refused[0] as PromiseRejectedResult | undefined)?.reason),
        );
      };

      const { required } = await report(shop);
      const sent = await world.relayerNonce();
      const transfer = { chainId: world.chain.chainId, to: shop, value: String(parseEther("0.001")), data: "0x" as const };
      const once = idempotency("send_transaction");
      await settledOf(
        Array.from({ length: 6 }, () => 0).map(() =>
          payFromAllowance(person.agent, person.credentialId, transfer, systemClock, { idempotency: once }),
        ),
      );
      assert.equal(await world.relayerNonce(), sent + 1, "one transaction");
      assert.equal(await balance(shop), parseEther("0.001"));

      const payment = idempotency("pay_x402");
      await settledOf(
        Array.from({ length: 6 }, () => 0).map(() =>
          payX402(person.agent, person.credentialId, required, systemClock, { idempotency: payment }),
        ),
      );
      assert.equal((await db().x402Payment.findMany({ where: { payee: shop } })).length, 1, "one payment held");
      assert.equal(await db().agentRequest.count({ where: { grantId: person.grantId } }), 2);
    });

    it("the SDK gives each payment a key and sends it again when the answer is lost: one transfer", async () => {
      const shop = world.recipient();
      const agent = await payingAgent(shop);
      const bodies: { name?: string; arguments?: Record<string, unknown> }[] = [];
      let lost = 0;
      // the first send_transaction's answer never reaches the SDK: the service paid, the connection dropped
      const flaky: FetchLike = async (url, init) => {
        const response = await fetch(url, init);
        const body = typeof init?.body === "string" ? (JSON.parse(init.body) as { method?: string; params?: (typeof bodies)[number] }) : {};
        if (body.method !== "tools/call" || body.params?.name !== "send_transaction") return response;
        bodies.push(body.params);
        if (lost++ > 0) return response;
        await response.text();
        throw new TypeError("fetch failed", { cause: new Error("socket hang up") });
      };
      const wallet = new AgentWalletClient({ baseUrl: world.app.baseUrl, accessToken: agent.accessToken, fetch: flaky });
      const sent = await world.relayerNonce();
      const paid = await wallet.sendTransaction({
        credential_id: agent.credentialId,
        chain_id: world.chain.chainId,
        to: shop,
        value: String(parseEther("0.001")),
      });
      assert.equal(paid.status, "completed");
      assert.equal(bodies.length, 2, "sent twice");
      const [key, again] = bodies.map((body) => body.arguments?.idempotency_key);
      assert.match(String(key), /^[0-9a-f-]{36}$/, "a key the SDK made");
      assert.equal(again, key, "the retry carries the same key");
      assert.equal(await world.relayerNonce(), sent + 1, "one transaction");
      assert.equal(await balance(shop), parseEther("0.001"));
      assert.deepEqual(
        (await requestsOf(agent)).map((request) => request.id),
        [paid.request_id],
      );
    });

    it("the CLI's send with --idempotency-key run twice pays once and prints the same transaction", async () => {
      const person = privateKeyToAccount(generatePrivateKey());
      await world.chain.fund(person.address, "1");
      const { apiKey, ...owner } = await apiKeyHolding(person.address, "Paying script");
      const shop = world.recipient();
      await signAllowanceFor(world.chain, person, owner, {
        recipients: [shop],
        native: parseEther("0.01"),
        transactions: 5,
        overLimit: "refuse",
      });
      const { env } = cliEnv({ AGENT_WALLET_API_KEY: apiKey, AGENT_WALLET_URL: world.app.baseUrl });
      const sent = await world.relayerNonce();
      const command = ["send", "Main", "--chain", String(world.chain.chainId), "--to", shop, "--value", "0.001eth", "--json"];
      const key = randomUUID();
      const runs = [await runCli([...command, "--idempotency-key", key], env), await runCli([...command, "--idempotency-key", key], env)];
      for (const run of runs) assert.equal(run.code, 0, run.stderr);
      const [first, second] = runs.map((run) => JSON.parse(run.stdout) as RequestView);
      assert.equal(first.status, "completed");
      assert.deepEqual(second, first);
      assert.equal(await world.relayerNonce(), sent + 1, "one transaction");
      assert.equal(await balance(shop), parseEther("0.001"));

      // without the option each run is a payment of its own (a new key each run)
      assert.equal((await runCli(command, env)).code, 0);
      assert.equal(await world.relayerNonce(), sent + 2);
    });
  });
}
