import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startApp, type RunningApp } from "../support/app";
import { addAuthenticator, launchBrowser, recordRequestBodies, signUp } from "../support/browser";
import { prfOutputInPage } from "../support/prf";
import { db } from "@/lib/db";
import { fromBase64Url, unsealPrivateKey } from "@/lib/wallet/seal";

/** Every stored value of every table, as text, to search for secrets. */
async function everyStoredValue(): Promise<string> {
  const tables = (await db().$queryRawUnsafe(`SELECT name FROM sqlite_master WHERE type = 'table'`)) as { name: string }[];
  const dumps = await Promise.all(tables.map(({ name }) => db().$queryRawUnsafe(`SELECT * FROM "${name}"`)));
  return JSON.stringify(dumps, (_key, value) =>
    typeof value === "bigint" ? value.toString() : value instanceof Uint8Array ? Buffer.from(value).toString("hex") : value,
  ).toLowerCase();
}

function assertNowhere(secret: string, places: { bodies: string[]; stored: string }, what: string) {
  const needle = secret.toLowerCase().replace(/^0x/, "");
  assert.ok(!places.bodies.some((body) => body.toLowerCase().includes(needle)), `${what} was sent to the server`);
  assert.ok(!places.stored.includes(needle), `${what} is stored`);
}

describe("wallets: keys sealed under the passkey", () => {
  let app: RunningApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let bodies: string[];
  let userId: string;

  before(async () => {
    app = await startApp();
    browser = await launchBrowser();
    context = await browser.newContext();
    bodies = recordRequestBodies(context);
    page = await context.newPage();
    await addAuthenticator(page);
    await signUp(page, app.appUrl, "wallet-owner@example.com");
    userId = (await db().user.findUniqueOrThrow({ where: { email: "wallet-owner@example.com" } })).id;
  });
  after(async () => {
    await browser?.close();
    await app?.stop();
  });

  it("creates a wallet whose stored ciphertext decrypts, with the same passkey, to the key of the stored address", async () => {
    await page.getByLabel("Wallet name", { exact: true }).fill("Main");
    await page.getByRole("button", { name: "Create wallet" }).click();
    await page.getByRole("status").filter({ hasText: "Main" }).waitFor();

    const credential = await db().credential.findFirstOrThrow({ where: { userId, name: "Main" }, include: { seals: true } });
    assert.equal(credential.kind, "evm");
    assert.equal(credential.seals.length, 1);
    const [seal] = credential.seals;
    const passkey = await db().passkey.findFirstOrThrow({ where: { userId } });
    assert.equal(seal.passkeyId, passkey.id);

    const prfOutput = await prfOutputInPage(page, seal.passkeyId, seal.prfSalt);
    const privateKey = await unsealPrivateKey({
      ...seal,
      prfOutput: fromBase64Url(prfOutput),
      credentialId: credential.id,
      address: credential.address,
    });
    assert.equal(privateKeyToAccount(privateKey).address, credential.address);

    // Bound to its credential and address: the same ciphertext does not open as another.
    await assert.rejects(
      unsealPrivateKey({ ...seal, prfOutput: fromBase64Url(prfOutput), credentialId: "cr_other", address: credential.address }),
    );

    const stored = await everyStoredValue();
    assertNowhere(privateKey, { bodies, stored }, "the private key");
    assertNowhere(Buffer.from(fromBase64Url(prfOutput)).toString("hex"), { bodies, stored }, "the PRF output (hex)");
    assert.ok(!bodies.some((body) => body.includes(prfOutput)), "the PRF output was sent to the server");
    assert.ok(!stored.includes(prfOutput.toLowerCase()), "the PRF output is stored");
    assert.ok(await db().auditEvent.findFirst({ where: { type: "credential.connected", credentialId: credential.id } }));
  });

  it("copies a wallet's address, exactly, with its copy button", async () => {
    const credential = await db().credential.findFirstOrThrow({ where: { userId, name: "Main" } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: app.appUrl });
    await page.getByRole("button", { name: "Copy address of Main" }).click();
    await page.getByRole("button", { name: "Copied" }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), credential.address);
  });

  it("imports a pasted private key without ever sending it", async () => {
    const privateKey = generatePrivateKey();
    const expected = privateKeyToAccount(privateKey).address;
    await page.getByLabel("Imported wallet name").fill("Imported");
    await page.getByLabel("Private key").fill(privateKey.slice(2));
    await page.getByRole("button", { name: "Import wallet" }).click();
    await page.getByRole("status").filter({ hasText: "Imported" }).waitFor();

    const credential = await db().credential.findFirstOrThrow({ where: { userId, name: "Imported" }, include: { seals: true } });
    assert.equal(credential.address, expected);
    const prfOutput = await prfOutputInPage(page, credential.seals[0].passkeyId, credential.seals[0].prfSalt);
    assert.equal(
      await unsealPrivateKey({
        ...credential.seals[0],
        prfOutput: fromBase64Url(prfOutput),
        credentialId: credential.id,
        address: credential.address,
      }),
      privateKey,
    );
    assertNowhere(privateKey, { bodies, stored: await everyStoredValue() }, "the imported private key");
  });

  it("rejects a malformed private key in the page", async () => {
    const before = await db().credential.count({ where: { userId } });
    await page.getByLabel("Imported wallet name").fill("Broken");
    await page.getByLabel("Private key").fill("0x1234");
    await page.getByRole("button", { name: "Import wallet" }).click();
    await page.getByRole("alert").filter({ hasText: "64 hexadecimal" }).waitFor();
    assert.equal(await db().credential.count({ where: { userId } }), before);
  });

  it("adds a watch-only address in checksummed form, and refuses a bad one", async () => {
    const address = privateKeyToAccount(generatePrivateKey()).address;
    await page.getByLabel("Watch-only name").fill("Cold storage");
    await page.getByLabel("Address").fill(address.toLowerCase());
    await page.getByRole("button", { name: "Add watch-only address" }).click();
    await page.getByRole("status").filter({ hasText: "Cold storage" }).waitFor();
    const credential = await db().credential.findFirstOrThrow({ where: { userId, name: "Cold storage" }, include: { seals: true } });
    assert.equal(credential.kind, "evm_watch");
    assert.equal(credential.address, address);
    assert.equal(credential.seals.length, 0);

    await page.getByLabel("Watch-only name").fill("Nonsense");
    await page.getByLabel("Address").fill("0xnot-an-address");
    await page.getByRole("button", { name: "Add watch-only address" }).click();
    await page.getByRole("alert").filter({ hasText: "EVM address" }).waitFor();
    assert.equal(await db().credential.count({ where: { userId, name: "Nonsense" } }), 0);
  });

  it("the server checks the checksum and refuses cross-site requests", async () => {
    const address = privateKeyToAccount(generatePrivateKey()).address;
    const wrongCase =
      address.slice(0, 2) +
      [...address.slice(2)].map((char) => (char === char.toUpperCase() ? char.toLowerCase() : char.toUpperCase())).join("");
    const badChecksum = await page.request.post(`${app.appUrl}/api/credentials`, {
      data: { kind: "evm_watch", name: "Wrong case", address: wrongCase },
      headers: { Origin: app.appUrl },
    });
    assert.equal(badChecksum.status(), 400);
    assert.equal((await badChecksum.json()).error, "invalid_input");

    const crossSite = await page.request.post(`${app.appUrl}/api/credentials`, {
      data: { kind: "evm_watch", name: "Cross site", address },
      headers: { Origin: "https://evil.example" },
    });
    assert.equal(crossSite.status(), 403);
    assert.equal((await crossSite.json()).error, "cross_site_request");
    assert.equal(await db().credential.count({ where: { userId, name: { in: ["Wrong case", "Cross site"] } } }), 0);
  });

  it("renames a wallet with a passkey approval of the new name, and removing it takes it out of every grant", async () => {
    const credential = await db().credential.findFirstOrThrow({ where: { userId, name: "Cold storage" } });
    const client = await db().client.create({ data: { id: `c_test_${Date.now()}`, kind: "oauth", name: "Some agent" } });
    await db().grant.create({
      data: {
        id: `g_test_${Date.now()}`,
        userId,
        clientId: client.id,
        scope: "mcp",
        credentials: { create: [{ credentialId: credential.id, mode: "read" }] },
      },
    });

    const pending = await db().agentRequest.create({
      data: {
        id: `rq_test_${Date.now()}`,
        userId,
        grantId: (await db().grant.findFirstOrThrow({ where: { clientId: client.id } })).id,
        clientId: client.id,
        credentialId: credential.id,
        kind: "sign_message",
        payload: JSON.stringify({ kind: "sign_message", message: "hi" }),
        digest: "0x00",
        createdAt: new Date(),
        expiresAt: new Date(Date.now() + 600_000),
      },
    });

    await page.getByRole("button", { name: "Rename Cold storage" }).click();
    await page.getByLabel("New name for Cold storage").fill("Vault");
    await page.getByRole("button", { name: "Save name" }).click();
    await page.getByRole("button", { name: "Remove Vault" }).waitFor();
    assert.equal((await db().credential.findUniqueOrThrow({ where: { id: credential.id } })).name, "Vault");
    const stepUp = await db().webAuthnChallenge.findFirst({
      where: { purpose: "rename-wallet", subject: credential.id, usedAt: { not: null } },
    });
    assert.ok(stepUp, "the rename was approved with the passkey");
    assert.match(stepUp.data ?? "", /Vault/, "the approval was bound to the new name");

    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Remove Vault" }).click();
    await page.getByRole("button", { name: "Remove Vault" }).waitFor({ state: "detached" });
    assert.equal(await db().credential.count({ where: { id: credential.id } }), 0);
    assert.equal(await db().grantCredential.count({ where: { credentialId: credential.id } }), 0);
    const ended = await db().agentRequest.findUniqueOrThrow({ where: { id: pending.id } });
    assert.deepEqual(
      [ended.status, ended.reason],
      ["cancelled", "The wallet was removed"],
      "its pending request can no longer be approved",
    );
    for (const type of ["credential.renamed", "credential.removed"]) {
      assert.ok(await db().auditEvent.findFirst({ where: { type, credentialId: credential.id } }), type);
    }
  });

  it("a person whose passkey has no PRF is told why, and can still watch addresses", async () => {
    const otherContext = await browser.newContext();
    const other = await otherContext.newPage();
    await addAuthenticator(other, { hasPrf: false });
    await signUp(other, app.appUrl, "no-prf@example.com");
    await other.getByRole("note").filter({ hasText: "PRF" }).waitFor();
    assert.equal(await other.getByRole("button", { name: "Create wallet" }).isDisabled(), true);
    assert.equal(await other.getByRole("button", { name: "Import wallet" }).isDisabled(), true);

    const address = privateKeyToAccount(generatePrivateKey()).address;
    await other.getByLabel("Watch-only name").fill("Watched");
    await other.getByLabel("Address").fill(address);
    await other.getByRole("button", { name: "Add watch-only address" }).click();
    await other.getByRole("status").filter({ hasText: "Watched" }).waitFor();

    // And the server refuses to start sealing for them.
    const refused = await other.request.post(`${app.appUrl}/api/credentials/seal-options`, { data: {}, headers: { Origin: app.appUrl } });
    assert.equal(refused.status(), 409);
    assert.equal((await refused.json()).error, "no_prf_passkey");
    await otherContext.close();
  });
});
