import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { addAuthenticator, addPasskeyFromSettings, appAndBrowser, removeAuthenticator, signIn, signUp } from "../support/browser";
import { db } from "@/lib/db";

describe("accounts with passkeys", () => {
  const suite = appAndBrowser();

  it("signs up with an email and a passkey, signs out, and signs back in with no username", async () => {
    const context = await suite.browser.newContext();
    const page = await context.newPage();
    await addAuthenticator(page);
    await signUp(page, suite.app.appUrl, "Ada@Example.com");

    const user = await db().user.findUniqueOrThrow({ where: { email: "ada@example.com" }, include: { passkeys: true } });
    assert.equal(user.passkeys.length, 1);
    assert.equal(user.passkeys[0].prfCapable, true, "PRF was requested at creation and the authenticator supports it");
    assert.ok(await db().auditEvent.findFirst({ where: { type: "user.signed_up", userId: user.id } }));

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(`${suite.app.appUrl}/`);
    await page.goto(`${suite.app.appUrl}/wallets`);
    await page.waitForURL(/\/\?next=%2Fwallets$/);

    await page.getByRole("button", { name: "Sign in with passkey" }).click();
    await page.waitForURL(`${suite.app.appUrl}/wallets`);
    assert.ok(await db().auditEvent.findFirst({ where: { type: "user.signed_in", userId: user.id } }));
    const passkey = await db().passkey.findUniqueOrThrow({ where: { id: user.passkeys[0].id } });
    assert.ok(passkey.counter > user.passkeys[0].counter, "the signature counter moved forward");
    await context.close();
  });

  it("sends a signed-out visitor to sign in and back to the page they wanted", async () => {
    const context = await suite.browser.newContext();
    const page = await context.newPage();
    await addAuthenticator(page);
    await signUp(page, suite.app.appUrl, "grace@example.com");
    await context.clearCookies();

    await page.goto(`${suite.app.appUrl}/settings`);
    await page.waitForURL(/\/\?next=%2Fsettings$/);
    await page.getByRole("button", { name: "Sign in with passkey" }).click();
    await page.waitForURL(`${suite.app.appUrl}/settings`);
    await page.getByRole("heading", { name: "Passkeys" }).waitFor();
    await context.close();
  });

  it("refuses a second account with the same email", async () => {
    const context = await suite.browser.newContext();
    const page = await context.newPage();
    await addAuthenticator(page);
    await signUp(page, suite.app.appUrl, "dup@example.com");
    await context.clearCookies();
    await page.goto(`${suite.app.appUrl}/`);
    await page.getByLabel("Email").fill("dup@example.com");
    await page.getByRole("button", { name: "Create account with passkey" }).click();
    await page
      .getByRole("alert")
      .filter({ hasText: "already" })
      .or(page.getByRole("alert").filter({ hasText: "exists" }))
      .waitFor();
    assert.equal(await db().user.count({ where: { email: "dup@example.com" } }), 1);
    await context.close();
  });

  it("adds a second passkey, signs in with it alone, renames it, and never removes the last one", async () => {
    const context = await suite.browser.newContext();
    const page = await context.newPage();
    const first = await addAuthenticator(page);
    await signUp(page, suite.app.appUrl, "lin@example.com");
    const user = await db().user.findUniqueOrThrow({ where: { email: "lin@example.com" } });

    // The only passkey cannot be removed.
    await page.goto(`${suite.app.appUrl}/settings`);
    assert.equal(await page.getByRole("button", { name: "Remove Passkey 1" }).isDisabled(), true);

    // A second authenticator (say, a phone) gets the second passkey, approved with the first.
    await addAuthenticator(page, { transport: "usb" });
    await addPasskeyFromSettings(page, first, "Phone");
    await removeAuthenticator(first);
    assert.equal(await db().passkey.count({ where: { userId: user.id } }), 2);
    assert.ok(await db().auditEvent.findFirst({ where: { type: "passkey.added", userId: user.id } }));

    // Sign in with the second passkey alone.
    await context.clearCookies();
    await signIn(page, suite.app.appUrl, "/?next=%2Fsettings");
    await page.waitForURL(`${suite.app.appUrl}/settings`);

    await page.getByRole("button", { name: "Rename Phone" }).click();
    await page.getByLabel("New name for Phone").fill("Work phone");
    await page.getByRole("button", { name: "Save name" }).click();
    await page.getByText("Work phone").first().waitFor();

    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Remove Passkey 1" }).click();
    await page.getByRole("status").filter({ hasText: "removed" }).waitFor();
    const left = await db().passkey.findMany({ where: { userId: user.id } });
    assert.deepEqual(
      left.map((passkey) => passkey.name),
      ["Work phone"],
    );
    // The one passkey left cannot be removed.
    await page.locator("button:disabled", { hasText: "Remove Work phone" }).waitFor();
    assert.ok(await db().auditEvent.findFirst({ where: { type: "passkey.removed", userId: user.id } }));
    await context.close();
  });
});
