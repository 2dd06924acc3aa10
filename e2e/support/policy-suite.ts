// Spending policies through real MCP calls on the local chain, run on SQLite (e2e/mcp/policy.test.ts) and on
// PostgreSQL (e2e/postgres/policy.test.ts): one suite per test file, as a process holds one database client.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { encodeFunctionData, erc20Abi, maxUint256, parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startApp, type RunningApp } from "./app";
import { chainsSetting, startChain, type LocalChain } from "./chain";
import { INITIALIZE_PARAMS, mcp, obtainTokens } from "./oauth";
import { db } from "@/lib/db";
import { randomId } from "@/lib/crypto";
import type { Policy } from "@/contract";
import { eip2612Permit } from "@/lib/wallet/permit.fixture";

type ToolReply = { result?: { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { text: string }[] } };

const FRIEND = "0x000000000000000000000000000000000000bEEF";
const STRANGER = "0x000000000000000000000000000000000000dEaD";
const TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
/** This suite's PENDING_REQUESTS_PER_CREDENTIAL: above what its other tests leave waiting, below one burst of 30. */
const WAITING_AT_MOST = 12;

export function policySuite(database: "sqlite" | "postgres") {
  describe(`spending policies (${database})`, { timeout: 180_000 }, () => {
    let chain: LocalChain;
    let app: RunningApp;
    let bearer = "";
    let grantId = "";
    let credentialId = "";

    before(async () => {
      chain = await startChain();
      app = await startApp({ database, env: { CHAINS: chainsSetting(chain), PENDING_REQUESTS_PER_CREDENTIAL: String(WAITING_AT_MOST) } });
      const address = privateKeyToAccount(generatePrivateKey()).address;
      await chain.fund(address, "1000");
      const flow = await obtainTokens(app, {
        credentials: async (userId) => {
          credentialId = (await db().credential.create({ data: { id: randomId("cr_"), userId, name: "Main", kind: "evm", address } })).id;
          return [{ credentialId, mode: "approve" }];
        },
      });
      bearer = flow.tokens.access_token;
      grantId = flow.grantId;
      assert.equal((await mcp(app, bearer, "initialize", INITIALIZE_PARAMS)).status, 200);
    });
    after(async () => {
      await app?.stop();
      await chain?.stop();
    });

    /** The person's rules (set directly: the screens that edit them call the same storage). Earlier requests are cancelled. */
    async function withPolicy(policy: Policy) {
      for (const pending of await db().agentRequest.findMany({ where: { grantId, status: "pending" } })) {
        await db().agentRequest.update({ where: { id: pending.id }, data: { status: "cancelled" } });
      }
      await db().grantCredential.update({
        where: { grantId_credentialId: { grantId, credentialId } },
        data: { policy: JSON.stringify(policy) },
      });
    }

    async function call(name: string, args: Record<string, unknown>): Promise<ToolReply> {
      return (await (
        await mcp(app, bearer, "tools/call", { name, arguments: { credential_id: credentialId, ...args } })
      ).json()) as ToolReply;
    }
    const send = (to: string, ether: string, data?: string) =>
      call("send_transaction", { chain_id: chain.chainId, to, value: String(parseEther(ether)), ...(data ? { data } : {}) });

    function refusedBy(reply: ToolReply, rule: string) {
      assert.equal(reply.result?.isError, true, JSON.stringify(reply));
      assert.equal(reply.result?.structuredContent?.rule, rule);
      // the rule's id is its own field; the words say why
      assert.match(reply.result!.content![0].text, /^Refused by the spending policy: /);
    }
    function allowed(reply: ToolReply): string {
      assert.notEqual(reply.result?.isError, true, reply.result?.content?.[0].text);
      assert.equal(reply.result?.structuredContent?.status, "pending");
      return reply.result!.structuredContent!.request_id as string;
    }

    it("each rule refuses what it must, allows what it must, and a refusal never reaches the person", async () => {
      await withPolicy({ native: { per_transaction: String(parseEther("0.05")) } });
      const before = await db().agentRequest.count({ where: { grantId } });
      refusedBy(await send(FRIEND, "0.06"), "native.per_transaction");
      assert.equal(await db().agentRequest.count({ where: { grantId } }), before, "no request was created");
      allowed(await send(FRIEND, "0.05"));

      await withPolicy({ recipients: [FRIEND] });
      refusedBy(await send(STRANGER, "0.01"), "recipients");
      allowed(await send(FRIEND, "0.01"));

      await withPolicy({ chains: [1] });
      refusedBy(await send(FRIEND, "0.01"), "chains");

      await withPolicy({ sign_message: false });
      refusedBy(await call("sign_message", { message: "hello" }), "sign_message");

      const approveAll = encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [STRANGER, maxUint256] });
      await withPolicy({ no_unlimited_approvals: true });
      refusedBy(await send(TOKEN, "0", approveAll), "no_unlimited_approvals");

      await withPolicy({ contracts: [{ address: TOKEN, selectors: ["0xa9059cbb"] }] });
      refusedBy(await send(TOKEN, "0", approveAll), "contracts.selectors");
      refusedBy(await send(STRANGER, "0", approveAll), "contracts");

      await withPolicy({ requests_per_hour: 0 });
      refusedBy(await call("sign_message", { message: "hello" }), "requests_per_hour");

      const refusals = await db().auditEvent.count({ where: { type: "policy.refused", credentialId } });
      assert.equal(refusals, 8, "every refusal is audited");
    });

    it("a token permit counts under the token's caps like an approve, and get_policy shows what is left", async () => {
      await withPolicy({ tokens: [{ chain_id: chain.chainId, token: TOKEN, per_transaction: "80", per_day: "100" }] });
      const permit = (value: string) =>
        eip2612Permit({ token: TOKEN, chainId: chain.chainId, owner: FRIEND, spender: STRANGER, value, deadline: "2000000000" });
      refusedBy(await call("sign_typed_data", { typed_data: permit("81") }), "tokens.per_transaction");
      allowed(await call("sign_typed_data", { typed_data: permit("60") }));
      refusedBy(await call("sign_typed_data", { typed_data: permit("60") }), "tokens.per_day");
      const view = (await call("get_policy", {})).result?.structuredContent as {
        remaining: { tokens: { per_day: { remaining: string } }[] };
      };
      assert.equal(view.remaining.tokens[0].per_day.remaining, "40");
    });

    it("a daily cap counts pending requests from the moment they exist and frees them when cancelled; get_policy shows it", async () => {
      await withPolicy({ native: { per_day: String(parseEther("1")) } });
      const first = allowed(await send(FRIEND, "0.6"));
      refusedBy(await send(FRIEND, "0.6"), "native.per_day");
      const view = (await call("get_policy", {})).result?.structuredContent as { remaining: { native_per_day: { remaining: string } } };
      assert.equal(view.remaining.native_per_day.remaining, String(parseEther("0.4")));

      const cancelled = await mcp(app, bearer, "tools/call", { name: "cancel_request", arguments: { request_id: first } });
      assert.equal(((await cancelled.json()) as ToolReply).result?.structuredContent?.status, "cancelled");
      allowed(await send(FRIEND, "0.6"));
    });

    it("50 parallel requests that together exceed the daily cap: exactly as many succeed as fit", async () => {
      await withPolicy({ native: { per_day: String(parseEther("1")) } });
      const replies = await Promise.all(Array.from({ length: 50 }, () => send(FRIEND, "0.1")));
      const succeeded = replies.filter((reply) => !reply.result?.isError).length;
      const refused = replies.filter((reply) => reply.result?.structuredContent?.rule === "native.per_day").length;
      assert.equal(succeeded, 10);
      assert.equal(refused, 40);
    });

    it(`at most ${WAITING_AT_MOST} requests wait at once, exactly under concurrency; a cancellation frees a place`, async () => {
      await withPolicy({});
      const replies = await Promise.all(Array.from({ length: 30 }, (_, index) => call("sign_message", { message: `waiting ${index}` })));
      const waiting = replies.filter((reply) => !reply.result?.isError).map(allowed);
      assert.equal(waiting.length, WAITING_AT_MOST);
      for (const reply of replies.filter((reply) => reply.result?.isError)) {
        refusedBy(reply, "pending_requests");
        assert.deepEqual(reply.result?.structuredContent?.allowance, { limit: String(WAITING_AT_MOST), remaining: "0" });
      }
      assert.equal(await db().agentRequest.count({ where: { grantId, status: "pending" } }), WAITING_AT_MOST);

      const cancelled = await mcp(app, bearer, "tools/call", { name: "cancel_request", arguments: { request_id: waiting[0] } });
      assert.equal(((await cancelled.json()) as ToolReply).result?.structuredContent?.status, "cancelled");
      allowed(await call("sign_message", { message: "in the freed place" }));
      refusedBy(await call("sign_message", { message: "one too many" }), "pending_requests");
    });
  });
}
