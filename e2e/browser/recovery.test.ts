import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Locator } from "playwright-core";
import { privateKeyToAccount } from "viem/accounts";
import { appAndBrowser } from "../support/browser";
import { newPerson } from "../support/consent";
import { db } from "@/lib/db";

/** Everything each request of the context carries: method, URL, headers and body. */
function recordRequests(context: BrowserContext): string[] {
  const requests: string[] = [];
  context.on("request", (request) =>
    requests.push(`${request.method()} ${request.url()}\n${JSON.stringify(request.headers())}\n${request.postData() ?? ""}`),
  );
  return requests;
}

function assertNeverSent(requests: string[], secret: string, what: string) {
  const needle = secret.toLowerCase().replace(/^0x/, "");
  assert.ok(requests.length > 0);
  assert.ok(!requests.some((request) => request.toLowerCase().includes(needle)), `${what} was sent to the server`);
}

/** Attributes that keep browsers and the common password managers from offering to save (or fill) the field. */
async function assertNotForPasswordManagers(field: Locator) {
  const attributes = await field.evaluate((input) => Object.fromEntries([...input.attributes].map(({ name, value }) => [name, value])));
  assert.equal(attributes.type, "password");
  assert.equal(attributes.autocomplete, "off");
  for (const ignore of ["data-1p-ignore", "data-lpignore", "data-bwignore"]) assert.equal(attributes[ignore], "true", ignore);
  assert.equal(attributes["data-form-type"], "other");
}

describe("recovery: exporting a key and recovery kits", { timeout: 180_000 }, () => {
  const suite = appAndBrowser();

  it("shows the wallet's private key only in the page, after a passkey assertion", async () => {
    const person = await newPerson(suite.browser, suite.app, "exporter@example.com");
    const requests = recordRequests(person.context);
    const { page } = person;
    const user = await db().user.findUniqueOrThrow({ where: { email: "exporter@example.com" } });
    const main = await db().credential.findFirstOrThrow({ where: { userId: user.id, name: "Main" } });

    await page.getByRole("button", { name: "Export private key" }).click();
    const shown = page.getByRole("region", { name: "Private key of Main" });
    await shown.getByRole("alert").filter({ hasText: "Anyone with this key controls the funds" }).waitFor();
    const privateKey = (await shown.getByLabel("Private key").textContent()) as `0x${string}`;
    assert.equal(privateKeyToAccount(privateKey).address, main.address);

    await shown.getByRole("button", { name: "Hide" }).click();
    await shown.waitFor({ state: "detached" });
    assertNeverSent(requests, privateKey, "the private key");
    const event = await db().auditEvent.findFirstOrThrow({ where: { type: "credential.export_requested", credentialId: main.id } });
    assert.ok(!event.data.toLowerCase().includes(privateKey.slice(2).toLowerCase()));
    await person.context.close();
  });

  it("moves a wallet to a new account through a recovery kit and its passphrase", async () => {
    const passphrase = "a long recovery passphrase 7";
    const owner = await newPerson(suite.browser, suite.app, "kit-owner@example.com");
    const ownerRequests = recordRequests(owner.context);
    const ownerId = (await db().user.findUniqueOrThrow({ where: { email: "kit-owner@example.com" } })).id;
    const main = await db().credential.findFirstOrThrow({ where: { userId: ownerId, name: "Main" } });

    await owner.page.getByRole("button", { name: "Download recovery kit" }).click();
    await assertNotForPasswordManagers(owner.page.getByLabel("Recovery passphrase", { exact: true }));
    await assertNotForPasswordManagers(owner.page.getByLabel("Confirm recovery passphrase", { exact: true }));
    await owner.page.getByLabel("Recovery passphrase", { exact: true }).fill("too short");
    await owner.page.getByLabel("Confirm recovery passphrase", { exact: true }).fill("too short");
    await owner.page.getByRole("button", { name: "Encrypt and download" }).click();
    await owner.page.getByRole("alert").filter({ hasText: "at least 12 characters" }).waitFor();

    await owner.page.getByLabel("Recovery passphrase", { exact: true }).fill(passphrase);
    await owner.page.getByLabel("Confirm recovery passphrase", { exact: true }).fill(passphrase);
    const [download] = await Promise.all([
      owner.page.waitForEvent("download"),
      owner.page.getByRole("button", { name: "Encrypt and download" }).click(),
    ]);
    const kitPath = join(await mkdtemp(join(tmpdir(), "recovery-kit-")), "kit.json");
    await download.saveAs(kitPath);
    await owner.page.getByRole("status").filter({ hasText: "Recovery kit for Main downloaded" }).waitFor();
    await owner.context.close();

    // Someone who lost every passkey: a new account in a fresh browser.
    const heir = await newPerson(suite.browser, suite.app, "kit-heir@example.com", []);
    const heirRequests = recordRequests(heir.context);
    const heirId = (await db().user.findUniqueOrThrow({ where: { email: "kit-heir@example.com" } })).id;
    const { page } = heir;
    await page.getByLabel("Recovered wallet name").fill("Recovered");
    await assertNotForPasswordManagers(page.getByLabel("Recovery kit passphrase"));

    // A kit that asks for more scrypt work than a kit may is refused before the browser spends it.
    const kit = JSON.parse(await readFile(kitPath, "utf8")) as { params: Record<string, number> };
    const hostilePath = join(await mkdtemp(join(tmpdir(), "recovery-kit-")), "hostile.json");
    await writeFile(hostilePath, JSON.stringify({ ...kit, params: { ...kit.params, N: 2 ** 21 } }));
    await page.getByLabel("Recovery kit file").setInputFiles(hostilePath);
    await page.getByLabel("Recovery kit passphrase").fill(passphrase);
    await page.getByRole("button", { name: "Import recovery kit" }).click();
    await page.getByRole("alert").filter({ hasText: "This recovery kit asks for more work than a kit may (scrypt N = 2097152" }).waitFor();
    assert.equal(await db().credential.count({ where: { userId: heirId } }), 0);

    await page.getByLabel("Recovery kit file").setInputFiles(kitPath);
    await page.getByLabel("Recovery kit passphrase").fill(passphrase + "x");
    await page.getByRole("button", { name: "Import recovery kit" }).click();
    await page.getByRole("alert").filter({ hasText: "Wrong passphrase, or the recovery kit was changed" }).waitFor();
    assert.equal(await db().credential.count({ where: { userId: heirId } }), 0);

    await page.getByLabel("Recovery kit passphrase").fill(passphrase);
    await page.getByRole("button", { name: "Import recovery kit" }).click();
    await page.getByRole("status").filter({ hasText: "Recovered" }).waitFor();
    const recovered = await db().credential.findFirstOrThrow({ where: { userId: heirId, name: "Recovered" }, include: { seals: true } });
    assert.equal(recovered.address, main.address);
    assert.equal(recovered.kind, "evm");
    assert.equal(recovered.seals.length, 1);

    // The key itself is read back from the new account's seal, to check that it never left either browser.
    await page.getByRole("button", { name: "Export private key" }).click();
    const privateKey = await page.getByRole("region", { name: "Private key of Recovered" }).getByLabel("Private key").textContent();
    assert.equal(privateKeyToAccount(privateKey as `0x${string}`).address, main.address);
    for (const requests of [ownerRequests, heirRequests]) {
      assertNeverSent(requests, privateKey!, "the private key");
      assertNeverSent(requests, passphrase, "the passphrase");
    }
    await heir.context.close();
  });
});
