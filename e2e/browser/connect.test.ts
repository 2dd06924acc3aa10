// The Connect an agent page in Chromium at a phone's width and a desktop's: reached from the Clients screen and
// the header, every snippet names this deployment's API origin (BASE_URL, here another host than the app's),
// each copy button puts exactly its snippet on the clipboard, nothing overflows the phone's width, axe finds no
// serious or critical violation, and each screen is written to test-results/screenshots.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { appAndBrowser } from "../support/browser";
import { newPerson } from "../support/consent";
import { clientSetups } from "@/lib/connect/client-setup";

const SCREENSHOTS = path.resolve("test-results", "screenshots");

describe("the Connect an agent page", { timeout: 180_000 }, () => {
  const suite = appAndBrowser({ baseHost: "127.0.0.1" });

  it("asks a signed-out visitor to sign in first", async () => {
    const context = await suite.browser.newContext();
    const page = await context.newPage();
    await page.goto(`${suite.app.appUrl}/connect`);
    await page.waitForURL(/\/\?next=%2Fconnect$/);
    await page.getByRole("button", { name: "Sign in with passkey" }).waitFor();
    await context.close();
  });

  for (const viewport of [
    { name: "phone", width: 375, height: 812 },
    { name: "desktop", width: 1280, height: 800 },
  ]) {
    it(`shows this deployment's snippets and copies each exactly (${viewport.name})`, async () => {
      const person = await newPerson(suite.browser, suite.app, `connect-${viewport.name}@example.com`, []);
      const { page, context } = person;
      await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: suite.app.appUrl });
      await page.setViewportSize(viewport);

      await page.goto(`${suite.app.appUrl}/clients`);
      await page.getByRole("main").getByRole("link", { name: "Connect an agent" }).click();
      await page.waitForURL(`${suite.app.appUrl}/connect`);
      await page.getByRole("heading", { level: 1, name: "Connect an agent" }).waitFor();
      assert.equal(
        await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Connect", exact: true }).getAttribute("href"),
        "/connect",
      );

      const base = suite.app.configuredBaseUrl;
      assert.notEqual(new URL(base).host, new URL(suite.app.appUrl).host, "the API origin differs from the page's");
      const endpoint = page.getByRole("button", { name: "Copy MCP endpoint" });
      await endpoint.click();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `${base}/mcp`);

      const setups = clientSetups(base);
      for (const setup of setups) {
        const section = page.getByRole("region", { name: setup.client });
        await section.getByRole("heading", { level: 2, name: setup.client }).waitFor();
        const shown = await section.locator("pre").allTextContents();
        assert.deepEqual(
          shown,
          setup.snippets.map((snippet) => snippet.code),
          `${setup.client}: the page shows the snippets`,
        );
        for (const [index, snippet] of setup.snippets.entries()) {
          assert.ok(snippet.code.includes(base), `${snippet.what} names ${base}`);
          assert.ok(!snippet.code.includes(suite.app.appUrl), `${snippet.what} names the API origin, not the app's`);
          const figure = section.locator("figure").nth(index);
          await figure.getByRole("button", { name: `Copy ${snippet.what}`, exact: true }).click();
          await figure.getByRole("button", { name: "Copied" }).waitFor();
          assert.equal(await page.evaluate(() => navigator.clipboard.readText()), snippet.code, `Copy ${snippet.what}`);
        }
      }
      // Each client's section is reachable from the list at the top.
      await page.getByRole("navigation", { name: "Setup guides" }).getByRole("link", { name: "Codex" }).click();
      await page.waitForURL(/#codex$/);

      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= viewport.width, `nothing overflows the ${viewport.width}px width (page is ${width}px)`);
      const { violations } = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
      assert.deepEqual(
        violations
          .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
          .map((violation) => violation.id),
        [],
      );
      fs.mkdirSync(SCREENSHOTS, { recursive: true });
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: path.join(SCREENSHOTS, `connect-${viewport.name}.png`), fullPage: true });
      await context.close();
    });
  }
});
