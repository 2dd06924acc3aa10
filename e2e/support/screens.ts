// A screen as people see it: written to test-results/screenshots (CI keeps them), checked with axe-core
// (WCAG 2.x A and AA), and measured for sideways scrolling at the viewport's width.
import fs from "node:fs";
import path from "node:path";
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "playwright-core";

const SCREENSHOTS = path.resolve("test-results", "screenshots");

/** The screen's serious or critical axe violations, after writing it to test-results/screenshots/<file>.png. */
export async function checkScreen(page: Page, file: string): Promise<string[]> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${file}.png`), fullPage: true });
  const { violations } = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => `${violation.id}: ${violation.help} — ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`);
}

/** How much wider than the viewport the page is (0: nothing makes the person scroll sideways). */
export async function overflow(page: Page): Promise<number> {
  return page.evaluate(() => Math.max(0, document.documentElement.scrollWidth - window.innerWidth));
}

export const VIEWPORTS = [
  { name: "phone", width: 375, height: 812 },
  { name: "desktop", width: 1280, height: 800 },
] as const;
