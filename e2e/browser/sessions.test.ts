// Sessions in Chromium: "Sign out everywhere" and removing a passkey end a copied
// session (a second browser context holding the same cookie), and the settings
// page tells which passkeys unlock each wallet.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { addAuthenticator, addPasskeyFromSettings, appAndBrowser, signUp } from "../support/browser";
import { createWallet } from "../support/consent";
import { db } from "@/lib/db";

describe("sessions end everywhere", { timeout: 120_000 }, () => {
  const suite = appAndBrowser();

  /** A person signed up in one context, and a second context holding a copy of the session cookie. */
  async function personWithCopiedSession(email: string) {
    const context = await suite.browser.newContext();
    const page = await context.newPage();
    const authenticator = await addAuthenticator(page);
    await signUp(page, suite.app.appUrl, email);
    const copy = await suite.browser.newContext({ storageState: await context.storageState() });
    const copyPage = await copy.newPage();
    await copyPage.goto(`${suite.app.appUrl}/settings`);
    await copyPage.getByRole("heading", { name: "Settings" }).waitFor();
    return { context, page, authenticator, copy, copyPage };
  }

  async function sentToSignIn(page: Page) {
    await page.goto(`${suite.app.appUrl}/settings`);
    await page.waitForURL(/\/\?next=%2Fsettings$/);
    await page.getByRole("button", { name: "Sign in with passkey" }).waitFor();
  }

  it("Sign out everywhere ends the other context's session and this one", async () => {
    const { context, page, copy, copyPage } = await personWithCopiedSession("everywhere@example.com");
    await page.goto(`${suite.app.appUrl}/settings`);
    await page.getByRole("button", { name: "Sign out everywhere" }).click();
    await page.waitForURL(`${suite.app.appUrl}/`);
    await sentToSignIn(copyPage);
    await sentToSignIn(page);
    const user = await db().user.findUniqueOrThrow({ where: { email: "everywhere@example.com" } });
    assert.ok(await db().auditEvent.findFirst({ where: { userId: user.id, type: "session.ended_everywhere" } }));
    await copy.close();
    await context.close();
  });

  it("removing a passkey ends the other context's session; this one stays signed in", async () => {
    const { context, page, authenticator, copy, copyPage } = await personWithCopiedSession("remover@example.com");
    await page.goto(`${suite.app.appUrl}/settings`);
    await addAuthenticator(page, { transport: "usb" });
    await addPasskeyFromSettings(page, authenticator, "Phone");
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Remove Phone" }).click();
    await page.getByRole("status").filter({ hasText: "removed" }).waitFor();
    await sentToSignIn(copyPage);
    await page.reload();
    await page.getByRole("heading", { name: "Settings" }).waitFor();
    assert.equal(new URL(page.url()).pathname, "/settings");
    await copy.close();
    await context.close();
  });

  it("shows which passkeys unlock each wallet and warns when only one does", async () => {
    const context = await suite.browser.newContext();
    const page = await context.newPage();
    await addAuthenticator(page);
    await signUp(page, suite.app.appUrl, "unlockers@example.com");
    await createWallet(page, "Main");
    await page.goto(`${suite.app.appUrl}/settings`);
    const main = page.getByRole("list", { name: "Wallet unlocking" }).getByRole("listitem", { name: "Main" });
    await main.getByText("Unlocked by Passkey 1").waitFor();
    await main.getByRole("note").filter({ hasText: "Only Passkey 1 can unlock Main" }).waitFor();
    await context.close();
  });
});
