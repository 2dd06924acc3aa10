import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { startApp, type RunningApp } from "../support/app";
import { launchBrowser } from "../support/browser";
import { newPerson } from "../support/consent";
import { db } from "@/lib/db";
import { randomId } from "@/lib/crypto";
import { AUDIT_EVENT_TYPES, recordAudit } from "@/lib/audit";

const EMAIL = "audit-owner@example.com";

describe("the /audit screen", () => {
  let app: RunningApp;
  let browser: Browser;
  let page: Page;
  let userId: string;
  let mainId: string;
  let grantedClientId: string;
  let unrelatedClientId: string;
  const otherUserId = randomId("u_");

  /** The seqs this person may see, newest first, computed independently of lib/audit/query. */
  async function visibleSeqs(where: Record<string, unknown> = {}): Promise<number[]> {
    const rows = await db().auditEvent.findMany({
      where: { AND: [{ OR: [{ userId }, { userId: null, clientId: grantedClientId }] }, where] },
      orderBy: { seq: "desc" },
      select: { seq: true },
    });
    return rows.map((row) => row.seq);
  }

  const rows = () => page.locator("table.audit-table tbody tr");
  /** The page's events, newest first (decisions and reads are shown apart, each group newest first). */
  async function shownSeqs(): Promise<number[]> {
    const seqs = await rows().evaluateAll((trs) => trs.map((tr) => Number(tr.getAttribute("data-seq"))));
    return seqs.sort((a, b) => b - a);
  }
  async function columnTexts(label: string): Promise<string[]> {
    return page.locator(`table.audit-table tbody td[data-label="${label}"]`).allInnerTexts();
  }
  async function filter(choices: { type?: string; client?: string; credential?: string; from?: string; to?: string }) {
    await page.goto(`${app.appUrl}/audit`);
    if (choices.type) await page.getByLabel("Event type").selectOption({ label: choices.type });
    if (choices.client) await page.getByLabel("Client", { exact: true }).selectOption({ label: choices.client });
    if (choices.credential) await page.getByLabel("Credential", { exact: true }).selectOption({ label: choices.credential });
    if (choices.from) await page.getByLabel("From", { exact: true }).fill(choices.from);
    if (choices.to) await page.getByLabel("To", { exact: true }).fill(choices.to);
    await Promise.all([page.waitForURL(/\/audit\?/), page.getByRole("button", { name: "Filter" }).click()]);
  }

  before(async () => {
    app = await startApp();
    browser = await launchBrowser();
    ({ page } = await newPerson(browser, app, EMAIL));
    userId = (await db().user.findUniqueOrThrow({ where: { email: EMAIL } })).id;
    mainId = (await db().credential.findFirstOrThrow({ where: { userId, name: "Main" } })).id;

    // A client this person granted (its unattributed events are theirs), and one they never did.
    grantedClientId = randomId("cl_");
    unrelatedClientId = randomId("cl_");
    for (const [id, name] of [
      [grantedClientId, "Granted agent"],
      [unrelatedClientId, "Unrelated agent"],
    ]) {
      await db().client.create({ data: { id, kind: "oauth", name, redirectUris: JSON.stringify(["http://localhost:8976/callback"]) } });
      await recordAudit({ type: "client.registered", clientId: id, data: { name, redirectHosts: ["localhost:8976"] } });
    }
    await db().grant.create({ data: { id: randomId("g_"), userId, clientId: grantedClientId, scope: "mcp" } });
    await recordAudit({
      type: "grant.approved",
      userId,
      clientId: grantedClientId,
      data: { grant: "g", scope: "mcp", credentials: [{ credential: mainId, mode: "approve" }] },
    });
    await recordAudit({ type: "client.revoked", clientId: unrelatedClientId, data: { reason: "replay" } });

    // Another person: their own events, and their token for the same (shared) client.
    await recordAudit({
      type: "credential.connected",
      userId: otherUserId,
      credentialId: randomId("cr_"),
      data: { name: "Other person's wallet", kind: "evm", address: "0x0000000000000000000000000000000000000001" },
    });
    await recordAudit({
      type: "token.issued",
      userId: otherUserId,
      clientId: grantedClientId,
      data: { grant: "g_other", scope: "mcp", withRefresh: false },
    });

    // Markup in a stored value is shown as text, never interpreted.
    await recordAudit({ type: "credential.renamed", userId, credentialId: mainId, data: { name: "<b id=injected>bold</b>" } });
  });
  after(async () => {
    await browser?.close();
    await app?.stop();
  });

  it("asks a signed-out visitor to sign in first", async () => {
    const visitor = await browser.newContext();
    const other = await visitor.newPage();
    await other.goto(`${app.appUrl}/audit`);
    assert.equal(new URL(other.url()).pathname, "/");
    assert.equal(new URL(other.url()).searchParams.get("next"), "/audit");
    await visitor.close();
  });

  it("shows this person's events and their clients' events, never another person's", async () => {
    await page.goto(`${app.appUrl}/audit`);
    const own = (await visibleSeqs()).length;
    await page
      .getByRole("status")
      .filter({ hasText: `Audit chain verified: your ${own} events are intact` })
      .waitFor();
    assert.deepEqual(await shownSeqs(), await visibleSeqs());

    const types = await columnTexts("Event");
    for (const type of ["user.signed_up", "credential.connected", "client.registered", "grant.approved", "credential.renamed"])
      assert.ok(types.includes(type), `${type} is shown`);
    assert.ok(!types.includes("token.issued"), "another person's token for a shared client is not shown");
    assert.ok(!types.includes("client.revoked"), "an unrelated client's revocation is not shown");

    const text = await page.getByRole("region", { name: "Decisions and changes" }).innerText();
    assert.match(text, /Wallet “Main” connected: 0x[0-9a-fA-F]{40}/);
    assert.match(text, /Client “Granted agent” registered/);
    assert.match(text, /Access approved \(mcp\) to Main \(approve\)/);
    assert.ok(!text.includes("Other person's wallet"));
    assert.ok(!text.includes("Unrelated agent"));
    assert.ok(text.includes("<b id=injected>bold</b>"), "markup is shown as text");
    assert.equal(await page.locator("#injected").count(), 0, "markup is not interpreted");
    assert.ok((await columnTexts("Client")).includes("Granted agent"));

    // The form offers exactly the person's clients and credentials, and every event type.
    const clientOptions = await page.getByLabel("Client", { exact: true }).locator("option").allInnerTexts();
    assert.deepEqual(clientOptions, ["All clients", "Granted agent"]);
    const credentialOptions = await page.getByLabel("Credential", { exact: true }).locator("option").allInnerTexts();
    assert.deepEqual(credentialOptions, ["All credentials", "Main"]);
    assert.equal(await page.getByLabel("Event type").locator("option").count(), AUDIT_EVENT_TYPES.length + 1, "every event type, and all");
  });

  it("narrows the rows by event type, credential, client and time", async () => {
    const all = await visibleSeqs();

    await filter({ type: "credential.connected" });
    assert.deepEqual(await columnTexts("Event"), ["credential.connected"]);
    assert.deepEqual(await shownSeqs(), await visibleSeqs({ type: "credential.connected" }));

    await filter({ credential: "Main" });
    const byCredential = await shownSeqs();
    assert.deepEqual(byCredential, await visibleSeqs({ credentialId: mainId }));
    assert.ok(byCredential.length > 0 && byCredential.length < all.length);
    assert.ok((await columnTexts("Credential")).every((name) => name === "Main"));
    assert.deepEqual(new Set(await columnTexts("Event")), new Set(["credential.connected", "credential.renamed"]));

    await filter({ type: "credential.renamed", credential: "Main" });
    assert.deepEqual(await columnTexts("Event"), ["credential.renamed"]);

    await filter({ client: "Granted agent" });
    assert.deepEqual(await shownSeqs(), await visibleSeqs({ clientId: grantedClientId }));
    assert.deepEqual(await columnTexts("Event"), ["grant.approved", "client.registered"]);

    const tomorrow = new Date(Date.now() + 24 * 3600 * 1000).toISOString().slice(0, 10);
    const today = new Date().toISOString().slice(0, 10);
    await filter({ from: tomorrow });
    assert.equal(await rows().count(), 0);
    await page.getByText("No events match these filters.").waitFor();
    await filter({ from: today, to: today });
    assert.deepEqual(await shownSeqs(), all);

    // A malformed filter is reported, not dropped.
    await page.goto(`${app.appUrl}/audit?type=user.hacked`);
    await page.getByRole("alert").filter({ hasText: "Choose an event type from the list." }).waitFor();
    assert.equal(await rows().count(), 0);
  });

  it("pages 50 events at a time, newest first, with and without a filter", async () => {
    for (let n = 0; n < 60; n++) {
      await recordAudit({
        type: "mcp.tool_called",
        userId,
        clientId: grantedClientId,
        data: { tool: "list_credentials", outcome: "ok", n },
      });
    }
    const all = await visibleSeqs();
    assert.ok(all.length > 60 && all.length <= 100, `${all.length} events`);

    await page.goto(`${app.appUrl}/audit`);
    assert.deepEqual(await shownSeqs(), all.slice(0, 50));
    assert.equal(await page.getByRole("link", { name: "Newer" }).count(), 0, "the newest page has no newer page");
    await page.getByRole("link", { name: "Next page" }).click();
    await page.waitForURL(/before=/);
    assert.deepEqual(await shownSeqs(), all.slice(50));
    assert.equal(await page.getByRole("link", { name: "Next page" }).count(), 0, "the oldest page has no next page");
    await page.getByRole("link", { name: "Newer" }).click();
    await page.waitForURL(/after=/);
    assert.deepEqual(await shownSeqs(), all.slice(0, 50));
    assert.equal(await page.getByRole("link", { name: "Newer" }).count(), 0);

    // The links keep the filter.
    const calls = await visibleSeqs({ type: "mcp.tool_called" });
    assert.equal(calls.length, 60);
    await filter({ type: "mcp.tool_called" });
    assert.deepEqual(await shownSeqs(), calls.slice(0, 50));
    await page.getByRole("link", { name: "Next page" }).click();
    await page.waitForURL(/before=/);
    assert.equal(new URL(page.url()).searchParams.get("type"), "mcp.tool_called");
    assert.deepEqual(await shownSeqs(), calls.slice(50));
    assert.deepEqual(new Set(await columnTexts("Event")), new Set(["mcp.tool_called"]));
  });

  it("exports the same events as JSON Lines, only with the session", async () => {
    const full = await page.request.get(`${app.appUrl}/api/audit/export`);
    assert.equal(full.status(), 200);
    assert.match(full.headers()["content-type"], /^application\/x-ndjson/);
    assert.match(full.headers()["content-disposition"], /^attachment; filename="[^"]+\.jsonl"$/);
    const body = await full.text();
    assert.ok(body.endsWith("\n"));
    const lines = body
      .slice(0, -1)
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(
      lines.map((line) => line.seq),
      (await visibleSeqs()).reverse(),
      "every visible event, oldest first",
    );
    for (const line of lines) {
      assert.deepEqual(Object.keys(line), ["at", "clientId", "credentialId", "data", "hash", "prevHash", "requestId", "seq", "type"]);
      assert.equal(typeof line.data, "object");
    }
    const stored = await db().auditEvent.findUniqueOrThrow({ where: { seq: lines[0].seq as number } });
    assert.equal(lines[0].hash, stored.hash);
    assert.equal(lines[0].at, stored.at.toISOString());
    assert.ok(!body.includes("Other person's wallet") && !body.includes("Unrelated agent"));

    const filtered = await page.request.get(
      `${app.appUrl}/api/audit/export?type=credential.connected&credential=${encodeURIComponent(mainId)}`,
    );
    assert.equal(filtered.status(), 200);
    const connected = (await filtered.text())
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; credentialId: string; data: { name: string } });
    assert.equal(connected.length, 1);
    assert.deepEqual([connected[0].type, connected[0].credentialId, connected[0].data.name], ["credential.connected", mainId, "Main"]);

    // The page's own link carries the page's filters.
    await filter({ type: "mcp.tool_called" });
    const href = await page.getByRole("link", { name: "Export JSON Lines" }).getAttribute("href");
    assert.equal(href, "/api/audit/export?type=mcp.tool_called");
    const calls = (await (await page.request.get(`${app.appUrl}${href}`)).text())
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string });
    assert.equal(calls.length, 60);
    assert.ok(calls.every((line) => line.type === "mcp.tool_called"));

    const anonymous = await fetch(`${app.appUrl}/api/audit/export`);
    assert.equal(anonymous.status, 401);
    assert.equal(((await anonymous.json()) as { error: string }).error, "unauthenticated");
    const bad = await page.request.get(`${app.appUrl}/api/audit/export?from=someday`);
    assert.equal(bad.status(), 400);
  });

  it("shows a broken chain, naming the altered event", async () => {
    const event = await db().auditEvent.findFirstOrThrow({ where: { type: "credential.connected", credentialId: mainId } });
    await db().$executeRawUnsafe(`UPDATE "AuditEvent" SET "data" = ? WHERE "seq" = ?`, JSON.stringify({ name: "Not main" }), event.seq);
    await page.goto(`${app.appUrl}/audit`);
    await page
      .getByRole("alert")
      .filter({ hasText: `Audit chain broken at event ${event.seq}: event ${event.seq} was altered` })
      .waitFor();
    assert.equal(await page.getByText(/Audit chain verified/).count(), 0);
  });
});
