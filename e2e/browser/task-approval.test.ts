import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Browser } from "playwright-core";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient, resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import { verifyMessage } from "viem";
import { startApp, type RunningApp } from "../support/app";
import { launchBrowser } from "../support/browser";
import { connectAgent, newPerson, type Person } from "../support/consent";
import { connectWithBearer } from "../support/mcp-client";
import { rawDispatch } from "../support/task-dispatch";
import { db } from "@/lib/db";
import type { RequestView } from "@/contract";

describe("a sensitive call run as a task completes once the person approves with a passkey", { timeout: 300_000 }, () => {
  let app: RunningApp;
  let browser: Browser;
  let person: Person;
  let bearer = "";
  let credentialId = "";
  let address: `0x${string}`;
  const closers: { close(): Promise<void> }[] = [];

  before(async () => {
    app = await startApp();
    browser = await launchBrowser();
    person = await newPerson(browser, app, "tasks@example.com", ["Main"]);
    const connected = await connectAgent(app, person.page, "Task Agent", [{ name: "Main", mode: "approve" }]);
    await connected.client.close();
    bearer = connected.provider.tokens()!.access_token;
    const grant = await db().grant.findFirstOrThrow({ where: { client: { name: "Task Agent" } }, include: { credentials: true } });
    credentialId = grant.credentials[0].credentialId;
    address = (await db().credential.findUniqueOrThrow({ where: { id: credentialId } })).address as `0x${string}`;
  });
  after(async () => {
    await Promise.all(closers.map((closer) => closer.close().catch(() => {})));
    await browser?.close();
    await app?.stop();
  });

  /** The host shows the person the URL the task's status message names; they approve there. */
  async function approveFrom(statusMessage: string | undefined) {
    const url = /Waiting for approval at (\S+)/.exec(statusMessage ?? "")?.[1];
    assert.ok(url, `an approval URL in ${statusMessage}`);
    await person.page.goto(url);
    await person.page.getByRole("button", { name: "Approve with passkey" }).click();
    await person.page.getByRole("status").waitFor();
  }

  async function assertSigned(view: RequestView, message: string) {
    assert.equal(view.status, "completed");
    assert.ok(
      await verifyMessage({ address, message, signature: view.signature as `0x${string}` }),
      "the signature recovers to the wallet",
    );
  }

  it("2025-11-25 (the SDK v1 client's task stream): working, then completed, and tasks/result is the signed request", async () => {
    const client = await connectWithBearer(app.baseUrl, bearer);
    closers.push(client);
    const message = "Pay the task invoice #2025";
    const statuses: string[] = [];
    let view: RequestView | undefined;
    for await (const event of client.experimental.tasks.callToolStream(
      { name: "sign_message", arguments: { credential_id: credentialId, message } },
      CallToolResultSchema,
      { task: {} },
    )) {
      if (event.type === "taskCreated") {
        statuses.push(event.task.status);
        await approveFrom(event.task.statusMessage);
      } else if (event.type === "taskStatus") statuses.push(event.task.status);
      else if (event.type === "result") view = event.result.structuredContent as RequestView;
      else assert.fail(`the task failed: ${event.error.message}`);
    }
    assert.equal(statuses[0], "working");
    assert.equal(statuses.at(-1), "completed");
    assert.ok(view, "a result");
    await assertSigned(view, message);
  });

  it("2026-07-28 (the ext-tasks client): the task completes with the signed request inlined", async () => {
    const client = new ModernClient({ name: "e2e-task-agent", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await client.connect(
      new ModernTransport(new URL(`${app.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${bearer}` } } }),
    );
    const session = createTaskSessionFromClient(client, {
      endpointId: "task-approval",
      rawDispatch: rawDispatch(app, bearer),
      v2RequestFraming: { protocolVersion: "2026-07-28", clientInfo: { name: "e2e-task-agent", version: "1.0.0" }, clientCapabilities: {} },
    });
    closers.push(session, client);
    const message = "Pay the task invoice #2026";
    const execution = await session.callTool("sign_message", { credential_id: credentialId, message });
    assert.equal(execution.kind, "task");
    const task = await session.task(execution.handle!.taskId).snapshot();
    assert.equal(task.status, "working");
    await approveFrom(task.statusMessage);
    const { outcome } = await execution.settle();
    assert.equal(outcome.status, "completed");
    const result = resultFromTaskOutcome(outcome) as unknown as { isError?: boolean; structuredContent: RequestView };
    assert.ok(!result.isError);
    assert.equal(result.structuredContent.request_id, execution.handle!.taskId);
    await assertSigned(result.structuredContent, message);
  });
});
