// The person's side of the OAuth flow in the browser, and the agent's side with the MCP SDK client.
import assert from "node:assert/strict";
import type { Browser, BrowserContext, Page } from "playwright-core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RunningApp } from "./app";
import { addAuthenticator, signUp } from "./browser";
import { callbackListener, connectOrAuthorize, finishAndConnect, MemoryOAuthProvider } from "./mcp-client";

export type Person = { context: BrowserContext; page: Page; email: string };

/** A signed-up person with the named wallets created in their browser. */
export async function newPerson(browser: Browser, app: RunningApp, email: string, wallets: string[] = ["Main"]): Promise<Person> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await addAuthenticator(page);
  await signUp(page, app.appUrl, email);
  for (const name of wallets) await createWallet(page, name);
  return { context, page, email };
}

export async function createWallet(page: Page, name: string) {
  await page.getByLabel("Wallet name", { exact: true }).fill(name);
  await page.getByRole("button", { name: "Create wallet" }).click();
  await page.getByRole("status").filter({ hasText: name }).waitFor();
}

/** The MCP client asks; the person is sent to the consent screen. */
export async function agentAsks(app: RunningApp, page: Page, name = "Test Agent") {
  const callback = await callbackListener();
  const provider = new MemoryOAuthProvider(callback.url, name);
  assert.equal(await connectOrAuthorize(app.baseUrl, provider), null, "a client without a token is sent to authorize");
  assert.ok(provider.authorizationUrl, "the SDK discovered the authorization endpoint and registered");
  await page.goto(provider.authorizationUrl.toString());
  await page.waitForURL(/\/consent\?request=/);
  return { provider, callback };
}

export async function chooseAndApprove(page: Page, grants: { name: string; mode: "read" | "approve" }[], stayConnected?: boolean) {
  for (const grant of grants) {
    await page.getByRole("checkbox", { name: grant.name, exact: true }).check();
    await page.getByLabel(`Approval mode for ${grant.name}`).selectOption(grant.mode);
  }
  if (stayConnected !== undefined) await page.getByRole("checkbox", { name: "Stay connected" }).setChecked(stayConnected);
  await page.getByRole("button", { name: "Approve with passkey" }).click();
}

/** The query the client's redirect URI received, once the browser has landed there. */
export async function redirected(page: Page, callback: { received: Promise<URLSearchParams> }) {
  const query = await callback.received;
  await page.waitForURL(/\/callback\?/);
  return query;
}

/** The whole flow: an MCP client connected with the grant the person chose. */
export async function connectAgent(
  app: RunningApp,
  page: Page,
  name: string,
  grants: { name: string; mode: "read" | "approve" }[],
): Promise<{ client: Client; provider: MemoryOAuthProvider }> {
  const { provider, callback } = await agentAsks(app, page, name);
  await chooseAndApprove(page, grants);
  const client = await finishAndConnect(app.baseUrl, provider, (await redirected(page, callback)).get("code")!);
  await callback.close();
  return { client, provider };
}
