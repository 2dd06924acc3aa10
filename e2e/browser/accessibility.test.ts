// Every screen checked with axe-core in Chromium, signed out and signed in, at a phone's width and a
// desktop's, and on the phone in dark mode: no serious or critical violation (WCAG 2.x A and AA rules).
// Each screen is written to test-results/screenshots, which CI keeps for people to look at.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "playwright-core";
import { appAndBrowser } from "../support/browser";
import { agentAsks, connectAgent, newPerson } from "../support/consent";

const SCREENSHOTS = path.resolve("test-results", "screenshots");

/** The screen's serious or critical violations; the screen is also written to test-results/screenshots for people to look at. */
async function seriousViolations(page: Page, screen: string, viewport: string) {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = `screen${screen.replace(/[^a-z0-9]+/gi, "-").replace(/-$/, "")}-${viewport.replaceAll(" ", "-")}.png`;
  await page.screenshot({ path: path.join(SCREENSHOTS, file), fullPage: true });
  const { violations } = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => `${violation.id}: ${violation.help} — ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`);
}

describe("accessibility (axe-core)", { timeout: 300_000 }, () => {
  const suite = appAndBrowser();

  for (const { colorScheme, ...viewport } of [
    { name: "phone", width: 375, height: 812, colorScheme: "light" as const },
    { name: "desktop", width: 1280, height: 800, colorScheme: "light" as const },
    { name: "phone in dark mode", width: 375, height: 812, colorScheme: "dark" as const },
  ]) {
    it(`every screen has no serious or critical violation (${viewport.name})`, async () => {
      const signedOut = await suite.browser.newContext({ viewport, colorScheme });
      const visitor = await signedOut.newPage();
      await visitor.goto(suite.app.appUrl);
      const found: Record<string, string[]> = { "/ (signed out)": await seriousViolations(visitor, "/ signed out", viewport.name) };
      await signedOut.close();

      const person = await newPerson(suite.browser, suite.app, `a11y-${viewport.name.replaceAll(" ", "-")}@example.com`);
      const { page } = person;
      await page.setViewportSize(viewport);
      await page.emulateMedia({ colorScheme });
      const { callback } = await agentAsks(suite.app, page, "Reader");
      found["/consent"] = await seriousViolations(page, "/consent", viewport.name);
      await callback.close();
      const { client } = await connectAgent(suite.app, page, "Signer", [{ name: "Main", mode: "approve" }]);
      const credentials = (await client.callTool({ name: "list_credentials", arguments: {} })).structuredContent as {
        credentials: { id: string }[];
      };
      const asked = (await client.callTool({
        name: "sign_message",
        arguments: { credential_id: credentials.credentials[0].id, message: "Accessible?" },
      })) as unknown as { structuredContent: { approval_url: string } };
      await page.goto(asked.structuredContent.approval_url);
      await page.getByRole("button", { name: "Approve with passkey" }).waitFor();
      found["/approvals/[id]"] = await seriousViolations(page, "/approval", viewport.name);
      for (const path of ["/", "/approvals", "/clients", "/connect", "/settings", "/audit"]) {
        await page.goto(`${suite.app.appUrl}${path}`);
        found[path] = await seriousViolations(page, path === "/" ? "/wallets" : path, viewport.name);
      }
      await client.close();
      await person.context.close();
      assert.deepEqual(
        Object.entries(found).filter(([, violations]) => violations.length),
        [],
        "serious or critical axe violations",
      );
    });
  }
});
