// Chromium driven by playwright-core, with a CDP virtual authenticator standing in for the person's passkey.
// npm test picks the Chromium, checks it and passes it as CHROMIUM_PATH (scripts/test-chromium.mjs).
import { after, before } from "node:test";
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from "playwright-core";
import { startApp } from "./app";
import { AUTHENTICATOR_OPTIONS, CHROMIUM_ARGS } from "@/scripts/test-chromium.mjs";

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", headless: true, args: CHROMIUM_ARGS });
}

export type Authenticator = { cdp: CDPSession; authenticatorId: string };

/**
 * A passkey authenticator that verifies the user and answers PRF: the platform's
 * own by default, or a roaming one ("usb": a security key, or a phone) — Chrome
 * allows one platform authenticator per browser.
 */
export async function addAuthenticator(
  page: Page,
  options: { hasPrf?: boolean; transport?: "internal" | "usb" } = {},
): Promise<Authenticator> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable", { enableUI: false });
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { ...AUTHENTICATOR_OPTIONS, transport: options.transport ?? "internal", hasPrf: options.hasPrf ?? true },
  });
  return { cdp, authenticatorId };
}

export async function removeAuthenticator(authenticator: Authenticator): Promise<void> {
  await authenticator.cdp.send("WebAuthn.removeVirtualAuthenticator", { authenticatorId: authenticator.authenticatorId });
}

/** Every request body the page sends, for checking that secrets never leave it. */
export function recordRequestBodies(context: BrowserContext): string[] {
  const bodies: string[] = [];
  context.on("request", (request) => {
    const body = request.postData();
    if (body) bodies.push(`${request.method()} ${request.url()}\n${body}`);
    bodies.push(request.url());
  });
  return bodies;
}

export async function signUp(page: Page, appUrl: string, email: string): Promise<void> {
  await page.goto(`${appUrl}/`);
  await page.getByLabel("Email").fill(email);
  await page.getByRole("button", { name: "Create account with passkey" }).click();
  await page.waitForURL(`${appUrl}/wallets`);
}

export async function signIn(page: Page, appUrl: string, path = "/"): Promise<void> {
  await page.goto(`${appUrl}${path}`);
  await page.getByRole("button", { name: "Sign in with passkey" }).click();
}

/** Whether this authenticator answers on its own; one that does not stays out of a ceremony. */
async function setPresence(authenticator: Authenticator, enabled: boolean): Promise<void> {
  await authenticator.cdp.send("WebAuthn.setAutomaticPresenceSimulation", { authenticatorId: authenticator.authenticatorId, enabled });
}

/**
 * Adds a passkey from /settings on a second authenticator: `approver`, which holds a
 * passkey already registered, approves first, then stays silent while the new one is
 * created (the server's registration options are held back until it is).
 */
export async function addPasskeyFromSettings(page: Page, approver: Authenticator, name: string): Promise<void> {
  const registrationOptions = "**/api/passkeys/options";
  await page.route(registrationOptions, async (route) => {
    const response = await route.fetch();
    await setPresence(approver, false);
    await route.fulfill({ response });
  });
  await page.getByLabel("Passkey name").fill(name);
  await page.getByRole("button", { name: "Add passkey" }).click();
  await page.getByRole("status").filter({ hasText: name }).waitFor();
  await page.unroute(registrationOptions);
  await setPresence(approver, true);
}

/**
 * A suite's started app and browser: started before its tests, stopped after.
 * Read `suite.app` and `suite.browser` inside tests.
 */
export function appAndBrowser(options?: import("./app").StartOptions) {
  const suite = {} as { app: import("./app").RunningApp; browser: Browser };
  before(async () => {
    suite.app = await startApp(options);
    suite.browser = await launchBrowser();
  });
  after(async () => {
    await suite.browser?.close();
    await suite.app?.stop();
  });
  return suite;
}
