import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { addAuthenticator, appAndBrowser } from "../support/browser";
import { connectWithBearer, finishAndConnect } from "../support/mcp-client";
import { agentAsks, chooseAndApprove, newPerson, redirected } from "../support/consent";
import { db } from "@/lib/db";

async function listCredentials(client: Client) {
  const result = await client.callTool({ name: "list_credentials", arguments: {} });
  return (result.structuredContent as { credentials: { id: string; name: string; mode: string }[] }).credentials;
}

describe("the OAuth flow in a browser, driven by the MCP SDK client", { timeout: 240_000 }, () => {
  const suite = appAndBrowser();

  it("a signed-out person signs up on the consent screen, creates a wallet there, approves; the client connects, refreshes", async () => {
    const context = await suite.browser.newContext();
    const page = await context.newPage();
    await addAuthenticator(page);
    const { provider, callback } = await agentAsks(suite.app, page);

    // The consent screen shows who asks and where the code goes, before anything else.
    await page.getByRole("heading", { name: "An application wants to connect to your wallet" }).waitFor();
    await page.getByText(new URL(callback.url).host).waitFor();
    // The client's self-chosen name is shown as its claim, never as the page's heading.
    await page.getByText("calls itself “Test Agent”").waitFor();
    assert.equal(await page.getByRole("heading", { name: /Test Agent/ }).count(), 0);
    const consentUrl = page.url();
    const headers = (await page.request.get(consentUrl)).headers();
    assert.match(headers["content-security-policy"], /frame-ancestors 'none'/);

    await page.getByLabel("Email").fill("flow@example.com");
    await page.getByRole("button", { name: "Create account with passkey" }).click();
    await page.waitForURL(consentUrl);
    await page.getByLabel("Wallet name", { exact: true }).fill("Main");
    await page.getByRole("button", { name: "Create wallet" }).click();
    await page.getByRole("checkbox", { name: "Main", exact: true }).waitFor();
    assert.equal(await page.getByRole("checkbox", { name: "Stay connected" }).isChecked(), true, "offline_access was asked for");

    await chooseAndApprove(page, [{ name: "Main", mode: "approve" }]);
    const query = await redirected(page, callback);
    assert.equal(query.get("iss"), suite.app.baseUrl);
    assert.equal(query.get("state"), provider.lastState, "the client's state comes back unchanged");
    const client = await finishAndConnect(suite.app.baseUrl, provider, query.get("code")!);

    const { tools } = await client.listTools();
    assert.ok(tools.some((tool) => tool.name === "list_credentials"));
    assert.deepEqual(
      (await listCredentials(client)).map(({ name, mode }) => ({ name, mode })),
      [{ name: "Main", mode: "approve" }],
    );
    const first = provider.tokenHistory[0];
    assert.ok(first.refresh_token, "staying connected issues a refresh token");
    assert.equal(first.scope, "mcp offline_access");

    // Later: the access token is no longer good; the SDK refreshes and carries on.
    provider.storedTokens = { ...provider.storedTokens!, access_token: "expired.or.lost" };
    assert.equal((await listCredentials(client)).length, 1);
    assert.equal(provider.tokenHistory.length, 2);
    assert.notEqual(provider.tokenHistory[1].refresh_token, first.refresh_token, "the refresh token rotated");
    await client.close();
    await callback.close();
    await context.close();
  });

  it("without staying connected no refresh token is issued", async () => {
    const person = await newPerson(suite.browser, suite.app, "short@example.com");
    const { provider, callback } = await agentAsks(suite.app, person.page, "Short Agent");
    await chooseAndApprove(person.page, [{ name: "Main", mode: "read" }], false);
    const client = await finishAndConnect(suite.app.baseUrl, provider, (await redirected(person.page, callback)).get("code")!);
    assert.equal(provider.tokenHistory[0].refresh_token, undefined);
    assert.equal(provider.tokenHistory[0].scope, "mcp");
    assert.deepEqual(
      (await listCredentials(client)).map(({ mode }) => mode),
      ["read"],
    );
    await client.close();
    await callback.close();
    await person.context.close();
  });

  it("the spending-limit presets chosen on the consent screen become exactly the documented rules", async () => {
    const person = await newPerson(suite.browser, suite.app, "limits@example.com", ["Main", "Spare"]);
    const { provider, callback } = await agentAsks(suite.app, person.page, "Limited Agent");
    const page = person.page;
    for (const name of ["Main", "Spare"]) {
      await page.getByRole("checkbox", { name, exact: true }).check();
      await page.getByLabel(`Approval mode for ${name}`).selectOption("approve");
    }
    await page.getByLabel("Spending limits for Main").selectOption({ label: "Up to 0.05 ETH a transaction, 0.2 ETH a day" });
    await page.getByLabel("Spending limits for Spare").selectOption({ label: "Custom" });
    await page.getByLabel("Per transaction (ETH) for Spare").fill("0.01");
    await page.getByLabel("Allowed recipients for Spare").fill("0x000000000000000000000000000000000000bEEF");
    // In view beside every choice, preset or custom, and on unless the person clears it.
    assert.equal(await page.getByRole("checkbox", { name: "Refuse unlimited approvals for Main" }).isChecked(), true);
    assert.equal(await page.getByRole("checkbox", { name: "Refuse unlimited approvals for Spare" }).isChecked(), true);
    await page.getByRole("checkbox", { name: "Refuse unlimited approvals for Spare" }).uncheck();
    assert.deepEqual(await page.getByLabel("Approval mode for Spare").locator("option").allInnerTexts(), ["Read only", "Approve each"]);
    await page.getByRole("button", { name: "Approve with passkey" }).click();
    const client = await finishAndConnect(suite.app.baseUrl, provider, (await redirected(page, callback)).get("code")!);

    const policies: Record<string, unknown> = {};
    for (const credential of await listCredentials(client)) {
      const credentialId = credential.id;
      const result = await client.callTool({ name: "get_policy", arguments: { credential_id: credentialId } });
      policies[credential.name] = (result.structuredContent as { policy: unknown }).policy;
    }
    assert.deepEqual(policies, {
      Main: { native: { per_transaction: "50000000000000000", per_day: "200000000000000000" }, no_unlimited_approvals: true },
      Spare: { native: { per_transaction: "10000000000000000" }, recipients: ["0x000000000000000000000000000000000000bEEF"] },
    });
    await client.close();
    await callback.close();
    await person.context.close();
  });

  it("Deny sends the client access_denied with its state", async () => {
    const person = await newPerson(suite.browser, suite.app, "denier@example.com", []);
    const { provider, callback } = await agentAsks(suite.app, person.page, "Denied Agent");
    await person.page.getByRole("button", { name: "Deny" }).click();
    const query = await redirected(person.page, callback);
    assert.equal(query.get("error"), "access_denied");
    assert.equal(query.get("iss"), suite.app.baseUrl);
    assert.equal(query.get("code"), null);
    assert.equal(query.get("state"), new URL(provider.authorizationUrl!).searchParams.get("state"));
    await callback.close();
    await person.context.close();
  });

  it("an expired or already decided consent request shows a clear page", async () => {
    const person = await newPerson(suite.browser, suite.app, "late@example.com", []);
    const { callback } = await agentAsks(suite.app, person.page, "Slow Agent");
    const requestId = new URL(person.page.url()).searchParams.get("request")!;
    await db().authorizationRequest.update({ where: { id: requestId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    await person.page.reload();
    await person.page.getByRole("heading", { name: "This request expired" }).waitFor();
    assert.equal(await person.page.getByRole("button", { name: "Approve with passkey" }).count(), 0);

    const second = await agentAsks(suite.app, person.page, "Twice Agent");
    const url = person.page.url();
    await chooseAndApprove(person.page, []);
    await redirected(person.page, second.callback);
    await person.page.goto(url);
    await person.page.getByRole("heading", { name: "Already approved" }).waitFor();
    await callback.close();
    await second.callback.close();
    await person.context.close();
  });

  it("revoking a client on the Clients screen stops its token and its refresh at once", async () => {
    const person = await newPerson(suite.browser, suite.app, "revoker@example.com");
    const { provider, callback } = await agentAsks(suite.app, person.page, "Revoked Agent");
    await chooseAndApprove(person.page, [{ name: "Main", mode: "read" }]);
    const client = await finishAndConnect(suite.app.baseUrl, provider, (await redirected(person.page, callback)).get("code")!);
    assert.equal((await listCredentials(client)).length, 1);

    await person.page.goto(`${suite.app.appUrl}/clients`);
    const row = person.page.getByRole("listitem", { name: "Revoked Agent" });
    await row.getByText("Main (read)").waitFor();
    // In UTC, as the allowances' words on the same screen: the server's render and the browser's say the same.
    assert.match((await row.textContent())!, /Connected \d{4}-\d\d-\d\d \d\d:\d\d UTC · last used \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    person.page.once("dialog", (dialog) => void dialog.accept());
    await person.page.getByRole("button", { name: "Revoke Revoked Agent" }).click();
    await row.getByText("Revoked", { exact: true }).waitFor();

    // The same access token now fails, and so does the refresh the SDK tries.
    await assert.rejects(listCredentials(client));
    const refresh = await fetch(`${suite.app.baseUrl}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "refresh_token",
        client_id: String(provider.client!.client_id),
        refresh_token: provider.tokenHistory.at(-1)!.refresh_token!,
      }),
    });
    assert.equal(refresh.status, 400);
    assert.equal((await refresh.json()).error, "invalid_grant");
    await client.close().catch(() => {});
    await callback.close();
    await person.context.close();
  });

  it("a replayed code revokes the client and the Clients screen shows it revoked", async () => {
    const person = await newPerson(suite.browser, suite.app, "replay@example.com");
    const { provider, callback } = await agentAsks(suite.app, person.page, "Replayed Agent");
    await chooseAndApprove(person.page, [{ name: "Main", mode: "read" }]);
    const code = (await redirected(person.page, callback)).get("code")!;
    const client = await finishAndConnect(suite.app.baseUrl, provider, code);

    const replay = await fetch(`${suite.app.baseUrl}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        client_id: String(provider.client!.client_id),
        code,
        redirect_uri: callback.url,
        code_verifier: provider.verifier,
      }),
    });
    assert.equal((await replay.json()).error, "invalid_grant");
    await assert.rejects(listCredentials(client));
    await person.page.goto(`${suite.app.appUrl}/clients`);
    await person.page.getByRole("listitem", { name: "Replayed Agent" }).getByText("Revoked", { exact: true }).waitFor();
    await client.close().catch(() => {});
    await callback.close();
    await person.context.close();
  });

  it("a personal API key works as a bearer with exactly its grant, is shown once, and stops when revoked", async () => {
    const person = await newPerson(suite.browser, suite.app, "keys@example.com", ["Main", "Savings"]);
    const { page } = person;
    await page.goto(`${suite.app.appUrl}/clients`);
    await page.getByLabel("Key name").fill("CI key");
    await page.getByRole("checkbox", { name: "Savings", exact: true }).check();
    await page.getByLabel("Approval mode for Savings").selectOption("approve");
    await page.getByRole("button", { name: "Create API key" }).click();
    const key = (await page.getByTestId("new-api-key").textContent())!.trim();
    assert.match(key, /^svc_live_[0-9A-Za-z]{43}$/);

    const stored = await db().client.findFirstOrThrow({ where: { name: "CI key", kind: "api_key" } });
    assert.notEqual(stored.keyHash, key);
    assert.ok(!JSON.stringify(await db().auditEvent.findMany()).includes(key), "the key is not in the audit log");

    const client = await connectWithBearer(suite.app.baseUrl, key);
    assert.deepEqual(
      (await listCredentials(client)).map(({ name, mode }) => ({ name, mode })),
      [{ name: "Savings", mode: "approve" }],
    );

    await page.reload();
    assert.equal(await page.getByTestId("new-api-key").count(), 0, "the key is shown only once");
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Revoke CI key" }).click();
    await page.getByRole("listitem", { name: "CI key" }).getByText("Revoked", { exact: true }).waitFor();
    await assert.rejects(listCredentials(client));
    const direct = await fetch(`${suite.app.baseUrl}/mcp`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: "{}",
    });
    assert.equal(direct.status, 401);
    await client.close().catch(() => {});
    await person.context.close();
  });

  it("state-changing app routes refuse cross-site requests", async () => {
    const person = await newPerson(suite.browser, suite.app, "csrf@example.com", []);
    const { callback } = await agentAsks(suite.app, person.page, "Csrf Agent");
    const requestId = new URL(person.page.url()).searchParams.get("request")!;
    const crossSite = await person.page.request.post(`${suite.app.appUrl}/api/consent/${requestId}/deny`, {
      data: {},
      headers: { Origin: "https://evil.example" },
    });
    assert.equal(crossSite.status(), 403);
    assert.equal((await db().authorizationRequest.findUniqueOrThrow({ where: { id: requestId } })).outcome, null);
    await callback.close();
    await person.context.close();
  });
});

describe("the OAuth flow across two origins", { timeout: 120_000 }, () => {
  const suite = appAndBrowser({ baseHost: "127.0.0.1", appHost: "localhost" });

  it("discovers on BASE_URL, consents on APP_URL, connects", async () => {
    assert.notEqual(new URL(suite.app.baseUrl).host, new URL(suite.app.appUrl).host);
    const person = await newPerson(suite.browser, suite.app, "two-origins@example.com");
    const { provider, callback } = await agentAsks(suite.app, person.page, "Far Agent");
    assert.equal(new URL(person.page.url()).origin, suite.app.appUrl);
    assert.equal(provider.authorizationUrl!.origin, suite.app.baseUrl);
    await chooseAndApprove(person.page, [{ name: "Main", mode: "approve" }]);
    const query = await redirected(person.page, callback);
    assert.equal(query.get("iss"), suite.app.baseUrl);
    const client = await finishAndConnect(suite.app.baseUrl, provider, query.get("code")!);
    assert.deepEqual(
      (await listCredentials(client)).map(({ mode }) => mode),
      ["approve"],
    );
    await client.close();
    await callback.close();
    await person.context.close();
  });
});
