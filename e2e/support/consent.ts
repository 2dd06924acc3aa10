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

/** Imports a wallet by its private key on the page the person is on (Wallets), and waits for it to be listed. */
export async function importWallet(page: Page, name: string, privateKey: string) {
  await page.getByLabel("Imported wallet name").fill(name);
  await page.getByLabel("Private key").fill(privateKey);
  await page.getByRole("button", { name: "Import wallet" }).click();
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
  // hydrated (its buttons, consent's or a signed-out person's sign-in, are enabled only then): a box ticked before
  // would be ticked back by React
  await page.locator("main button:enabled").first().waitFor();
  return { provider, callback };
}

/**
 * A credential to grant. In approve mode its limits refuse unlimited approvals, as the form starts; `unlimitedApprovals:
 * "allow"` unchecks that box, for a test whose agent asks for what the rule refuses (an unlimited approval, typed data
 * or a call the wallet cannot read) so that the person decides it.
 */
export type Grant = { name: string; mode: "read" | "approve"; unlimitedApprovals?: "allow" };

/** Picks one credential, its mode and (as the grant says) its unlimited-approvals box, on the consent screen or the API-key form. */
export async function chooseGrant(page: Page, grant: Grant) {
  await page.getByRole("checkbox", { name: grant.name, exact: true }).check();
  await page.getByLabel(`Approval mode for ${grant.name}`).selectOption(grant.mode);
  if (grant.unlimitedApprovals === "allow")
    await page.getByRole("checkbox", { name: `Refuse unlimited approvals for ${grant.name}` }).uncheck();
}

export async function chooseAndApprove(page: Page, grants: Grant[], stayConnected?: boolean) {
  for (const grant of grants) await chooseGrant(page, grant);
  if (stayConnected !== undefined) await page.getByRole("checkbox", { name: "Stay connected" }).setChecked(stayConnected);
  await page.getByRole("button", { name: "Approve with passkey" }).click();
}

/** The query the client's redirect URI received, once the browser has landed there. */
export async function redirected(page: Page, callback: { received: Promise<URLSearchParams> }) {
  const query = await callback.received;
  await page.waitForURL(/\/callback\?/);
  return query;
}

/** The whole flow: an MCP client connected with the grant the person chose (and the code it spent to connect). */
export async function connectAgent(
  app: RunningApp,
  page: Page,
  name: string,
  grants: Grant[],
): Promise<{ client: Client; provider: MemoryOAuthProvider; code: string }> {
  const { provider, callback } = await agentAsks(app, page, name);
  await chooseAndApprove(page, grants);
  const code = (await redirected(page, callback)).get("code")!;
  const client = await finishAndConnect(app.baseUrl, provider, code);
  await callback.close();
  return { client, provider, code };
}
