// Two server processes (`npm start`'s server.ts) on one PostgreSQL, as behind a load balancer: nothing that correctness needs
// may live in one process. The person's side runs in this process, a third one on the same database.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { startApp, type RunningApp } from "../support/app";
import {
  approve,
  createUser,
  exchangeCode,
  expectOAuthError,
  INITIALIZE_PARAMS,
  mcp,
  refreshTokens,
  register,
  startValidAuthorization,
} from "../support/oauth";
import { db } from "@/lib/db";
import { randomId } from "@/lib/crypto";
import { rejectRequest } from "@/lib/wallet/approvals";
import { verifyAuditChain } from "@/lib/audit";

type ToolReply = { result?: { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { text: string }[] } };

describe("two instances on one PostgreSQL", { timeout: 120_000 }, () => {
  let first: RunningApp;
  let second: RunningApp;
  before(async () => {
    first = await startApp({ database: "postgres" });
    second = await startApp({ instanceOf: first });
  });
  after(async () => {
    await second?.stop();
    await first?.stop();
  });

  /** A person with one signing wallet, and a client connected to it: authorized on the first, token from the second. */
  async function connected() {
    const userId = (await createUser()).id;
    const address = `0x${randomBytes(20).toString("hex")}`;
    const credentialId = (await db().credential.create({ data: { id: randomId("cr_"), userId, name: "Main", kind: "evm", address } })).id;
    const client = await register(first);
    const { requestId, pkce } = await startValidAuthorization(first, client, { scope: "mcp offline_access" });
    const { code } = await approve(requestId, userId, [{ credentialId, mode: "approve" }]);
    const exchanged = await exchangeCode(second, client, code, pkce.verifier);
    assert.equal(exchanged.status, 200, await exchanged.clone().text());
    const tokens = (await exchanged.json()) as { access_token: string; refresh_token: string };
    for (const instance of [first, second])
      assert.equal((await mcp(instance, tokens.access_token, "initialize", INITIALIZE_PARAMS)).status, 200);
    return { userId, credentialId, client, tokens };
  }

  async function call(instance: RunningApp, bearer: string, name: string, args: Record<string, unknown>): Promise<ToolReply> {
    return (await (await mcp(instance, bearer, "tools/call", { name, arguments: args })).json()) as ToolReply;
  }

  it("authorize on one, token on the other, /mcp alternating; a replayed refresh on one revokes the client on both", async () => {
    const { client, tokens } = await connected();
    for (const instance of [first, second, first, second]) {
      const reply = await call(instance, tokens.access_token, "list_credentials", {});
      assert.deepEqual(
        (reply.result?.structuredContent?.credentials as { name: string }[]).map((entry) => entry.name),
        ["Main"],
      );
    }
    const refreshed = await refreshTokens(first, client, tokens.refresh_token);
    assert.equal(refreshed.status, 200);
    const { access_token: fresh } = (await refreshed.json()) as { access_token: string };
    assert.equal((await mcp(second, fresh, "initialize", INITIALIZE_PARAMS)).status, 200);

    await expectOAuthError(await refreshTokens(second, client, tokens.refresh_token), 400, "invalid_grant");
    for (const instance of [first, second]) assert.equal((await mcp(instance, fresh, "initialize", INITIALIZE_PARAMS)).status, 401);
  });

  it("an agent waiting on one instance learns of a decision made elsewhere", async () => {
    const { userId, credentialId, tokens } = await connected();
    const created = await call(first, tokens.access_token, "sign_message", { credential_id: credentialId, message: "Across instances" });
    const requestId = created.result?.structuredContent?.request_id as string;
    assert.ok(requestId, JSON.stringify(created));

    const waiting = call(second, tokens.access_token, "get_request", { request_id: requestId, wait_seconds: 30 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    await rejectRequest(userId, requestId, "Not now");
    const decided = await waiting;
    assert.equal(decided.result?.structuredContent?.status, "rejected");
    assert.equal(decided.result?.structuredContent?.reason, "Not now");
  });

  it("one instance killed (SIGKILL) under load loses nothing and duplicates nothing; its pending requests live on", async () => {
    const { userId, credentialId, tokens } = await connected();
    const messages = Array.from({ length: 40 }, (_, index) => `load ${index}`);
    const calls = messages.map(async (message, index) => {
      const instance = index % 2 ? second : first;
      try {
        const reply = await call(instance, tokens.access_token, "sign_message", { credential_id: credentialId, message });
        return { message, instance, requestId: reply.result?.structuredContent?.request_id as string | undefined };
      } catch {
        return { message, instance, requestId: undefined }; // the connection died with the instance
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    process.kill(second.pid, "SIGKILL");
    const outcomes = await Promise.all(calls);

    const rows = await db().agentRequest.findMany({ where: { userId }, select: { id: true, payload: true, status: true } });
    const byMessage = new Map<string, string[]>();
    for (const row of rows) {
      const { message } = JSON.parse(row.payload) as { message: string };
      byMessage.set(message, [...(byMessage.get(message) ?? []), row.id]);
    }
    for (const outcome of outcomes) {
      const stored = byMessage.get(outcome.message) ?? [];
      assert.ok(stored.length <= 1, `${outcome.message} was stored ${stored.length} times`);
      if (outcome.requestId) assert.deepEqual(stored, [outcome.requestId], `${outcome.message}: answered, so stored once`);
    }
    const answered = outcomes.filter((outcome) => outcome.requestId);
    assert.ok(answered.length >= 20, "the surviving instance answered its share");

    // A request the killed instance created is still there, and the survivor serves it.
    const orphan = answered.find((outcome) => outcome.instance === second) ?? answered[0];
    const seen = await call(first, tokens.access_token, "get_request", { request_id: orphan.requestId });
    assert.equal(seen.result?.structuredContent?.status, "pending");
    await rejectRequest(userId, orphan.requestId!, "After the crash");
    const decided = await call(first, tokens.access_token, "get_request", { request_id: orphan.requestId });
    assert.equal(decided.result?.structuredContent?.status, "rejected");
    assert.equal((await verifyAuditChain()).ok, true, "the audit chain is whole");
  });
});
