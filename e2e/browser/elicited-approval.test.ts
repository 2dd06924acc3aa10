import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Browser } from "playwright-core";
import type { CallToolResult, Client } from "@modelcontextprotocol/client";
import { verifyMessage } from "viem";
import { startApp, type RunningApp } from "../support/app";
import { launchBrowser } from "../support/browser";
import { connectAgent, newPerson, type Person } from "../support/consent";
import { connectModern, type UrlElicitation } from "../support/mcp-client";
import { db } from "@/lib/db";
import type { RequestView } from "@/contract";

describe("a 2026-07-28 client gets its signature through URL elicitation and the person's passkey", { timeout: 300_000 }, () => {
  let app: RunningApp;
  let browser: Browser;
  let person: Person;
  let agent: Client;
  let grantId = "";
  let credentialId = "";

  before(async () => {
    app = await startApp();
    browser = await launchBrowser();
    person = await newPerson(browser, app, "modern@example.com", ["Main"]);
    const connected = await connectAgent(app, person.page, "Modern Agent", [{ name: "Main", mode: "approve" }]);
    await connected.client.close();
    const bearer = connected.provider.tokens()!.access_token;
    const grant = await db().grant.findFirstOrThrow({ where: { client: { name: "Modern Agent" } }, include: { credentials: true } });
    grantId = grant.id;
    credentialId = grant.credentials[0].credentialId;

    // The host opens the URL it is given (here: the person's signed-in browser) and accepts.
    agent = await connectModern(app.baseUrl, bearer, {
      onUrlElicitation: async (request: UrlElicitation) => {
        asked.push(request);
        void approveAt(request.url);
        return "accept";
      },
    });
  });
  after(async () => {
    await agent?.close().catch(() => {});
    await browser?.close();
    await app?.stop();
  });

  const asked: UrlElicitation[] = [];
  let approving: Promise<void> = Promise.resolve();
  function approveAt(url: string) {
    approving = (async () => {
      await person.page.goto(url);
      await person.page.getByRole("button", { name: "Approve with passkey" }).click();
      await person.page.getByRole("status").waitFor();
    })();
    return approving;
  }

  it("sign_message: one call, the approval page, then the completed request whose signature verifies", async () => {
    const message = "Pay the modern invoice #7";
    const result = (await agent.callTool({ name: "sign_message", arguments: { credential_id: credentialId, message } })) as CallToolResult;
    await approving;
    assert.ok(!result.isError, JSON.stringify(result.content));
    const view = result.structuredContent as RequestView;
    assert.equal(view.status, "completed");
    assert.equal(asked.length, 1);
    assert.equal(asked[0].url, `${app.appUrl}/approvals/${view.request_id}`);
    assert.match(asked[0].message, /Approve/);

    const credential = await db().credential.findUniqueOrThrow({ where: { id: credentialId } });
    assert.ok(
      await verifyMessage({ address: credential.address as `0x${string}`, message, signature: view.signature as `0x${string}` }),
      "the signature recovers to the wallet's address",
    );
    assert.equal(await db().agentRequest.count({ where: { grantId } }), 1, "exactly one request");
  });
});
