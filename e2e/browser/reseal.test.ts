import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { privateKeyToAccount } from "viem/accounts";
import { addAuthenticator, addPasskeyFromSettings, appAndBrowser, signUp } from "../support/browser";
import { createWallet } from "../support/consent";
import { prfOutputInPage } from "../support/prf";
import { db } from "@/lib/db";
import { fromBase64Url, unsealPrivateKey } from "@/lib/wallet/seal";

describe("a second passkey unlocks existing wallets after re-sealing", { timeout: 120_000 }, () => {
  const suite = appAndBrowser();

  it("re-seals a key under a new passkey, which alone can then open it", async () => {
    const context = await suite.browser.newContext();
    const page = await context.newPage();
    const laptop = await addAuthenticator(page);
    await signUp(page, suite.app.appUrl, "two-devices@example.com");
    await createWallet(page, "Main");
    const user = await db().user.findUniqueOrThrow({ where: { email: "two-devices@example.com" } });
    const main = await db().credential.findFirstOrThrow({ where: { userId: user.id, name: "Main" } });

    // The phone's passkey is created on a second authenticator, approved by the laptop's.
    const phone = await addAuthenticator(page, { transport: "usb" });
    await page.goto(`${suite.app.appUrl}/settings`);
    await addPasskeyFromSettings(page, laptop, "Phone");
    const phoneKey = await db().passkey.findFirstOrThrow({ where: { userId: user.id, name: "Phone" } });
    await page.getByRole("note").filter({ hasText: "Only Passkey 1 can unlock Main" }).waitFor();

    // Removing the laptop's passkey now would strand Main.
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Remove Passkey 1" }).click();
    await page.getByRole("alert").filter({ hasText: "Only this passkey can unlock Main" }).waitFor();
    assert.equal(await db().passkey.count({ where: { userId: user.id } }), 2);

    await page.getByText("Unlocks 0 of 1 wallet").waitFor();
    await page.getByRole("button", { name: "Let Phone unlock Main" }).click();
    await page.getByRole("status").filter({ hasText: "Phone now unlocks Main" }).waitFor();
    const seals = await db().credentialSeal.findMany({ where: { credentialId: main.id } });
    assert.deepEqual(
      seals.map((seal) => seal.passkeyId).sort(),
      [phoneKey.id, seals.find((seal) => seal.passkeyId !== phoneKey.id)!.passkeyId].sort(),
    );
    assert.ok(await db().auditEvent.findFirst({ where: { type: "credential.resealed", credentialId: main.id } }));

    // Now the laptop's passkey can go, and the phone alone opens the key of the same address.
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Remove Passkey 1" }).click();
    await page.getByRole("status").filter({ hasText: "removed" }).waitFor();
    const [phoneSeal] = await db().credentialSeal.findMany({ where: { credentialId: main.id } });
    assert.equal(phoneSeal.passkeyId, phoneKey.id);
    const prfOutput = await prfOutputInPage(page, phoneSeal.passkeyId, phoneSeal.prfSalt);
    const key = await unsealPrivateKey({ ...phoneSeal, prfOutput: fromBase64Url(prfOutput), credentialId: main.id, address: main.address });
    assert.equal(privateKeyToAccount(key).address, main.address);
    void phone;
    await context.close();
  });
});
