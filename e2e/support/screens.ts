// A screen as people see it: written to test-results/screenshots (CI keeps them), checked with axe-core
// (WCAG 2.x A and AA), and measured for sideways scrolling at the viewport's width.
import fs from "node:fs";
import path from "node:path";
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "playwright-core";

const SCREENSHOTS = path.resolve("test-results", "screenshots");

/** Writes the whole page to test-results/screenshots/<file>.png. */
export async function screenshot(page: Page, file: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${file}.png`), fullPage: true });
}

/** The screen's serious or critical axe violations, after writing it to test-results/screenshots/<file>.png. */
export async function checkScreen(page: Page, file: string): Promise<string[]> {
  await screenshot(page, file);
  // After a refresh Next streams the page's metadata again: its <title> may be back only a moment later.
  await page.waitForFunction(() => document.title !== "");
  const { violations } = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => `${violation.id}: ${violation.help} — ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`);
}

/** How much wider than the viewport the page is (0: nothing makes the person scroll sideways). */
export async function overflow(page: Page): Promise<number> {
  return page.evaluate(() => Math.max(0, document.documentElement.scrollWidth - window.innerWidth));
}

/**
 * What makes the page scroll sideways, for a failure message: the element whose right edge lies furthest past the
 * viewport's (the innermost of equals, which is what widens the others), unless a box that scrolls or clips on its own
 * holds it in. null when nothing sticks out.
 */
export async function widestElement(page: Page): Promise<string | null> {
  // No functions declared inside: tsx would name them with a helper the page does not have.
  return page.evaluate(() => {
    const limit = window.innerWidth + 0.5;
    let widest: Element | null = null;
    let right = limit;
    // Elements, and runs of text that stick out of their element's box (a long word that does not wrap); each with the
    // first box that could hold it in.
    const found: [Element, DOMRect, Element | null][] = [...document.body.querySelectorAll("*")].map((element) => [
      element,
      element.getBoundingClientRect(),
      element.parentElement,
    ]);
    const texts = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    for (let text = texts.nextNode(); text; text = texts.nextNode()) {
      range.selectNodeContents(text);
      found.push([text.parentElement!, range.getBoundingClientRect(), text.parentElement]);
    }
    for (const [element, rect, container] of found) {
      if (rect.right < right) continue;
      let heldIn = false;
      for (let box = container; box && box !== document.body && !heldIn; box = box.parentElement)
        heldIn = getComputedStyle(box).overflowX !== "visible" && box.getBoundingClientRect().right <= limit;
      if (!heldIn) [widest, right] = [element, rect.right];
    }
    if (!widest) return null;
    const trail: string[] = [];
    for (let step: Element | null = widest; step && step !== document.body && trail.length < 4; step = step.parentElement)
      trail.unshift(step.tagName.toLowerCase() + [...step.classList].map((entry) => `.${entry}`).join(""));
    const text = (widest.textContent ?? "").replace(/\s+/g, " ").trim().slice(0, 80);
    return `${trail.join(" > ")} reaches ${Math.round(right)} px${text ? `: “${text}”` : ""}`;
  });
}

export const VIEWPORTS = [
  { name: "phone", width: 375, height: 812 },
  { name: "desktop", width: 1280, height: 800 },
] as const;

/**
 * The words broken across two lines inside `selector` (a table's cells: a column squeezed to a few letters breaks
 * "Credential" as "Creden-tial"), each with the text it stands in. A word here is a run of letters: an address, a
 * hash or a URL may wrap where it must.
 */
export async function brokenWords(page: Page, selector: string): Promise<string[]> {
  return page.evaluate((within) => {
    const broken: string[] = [];
    const range = document.createRange();
    for (const root of document.querySelectorAll(within)) {
      const texts = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      for (let text = texts.nextNode(); text; text = texts.nextNode()) {
        for (const match of (text.textContent ?? "").matchAll(/\p{L}+/gu)) {
          range.setStart(text, match.index);
          range.setEnd(text, match.index + match[0].length);
          const tops = new Set([...range.getClientRects()].filter((rect) => rect.width > 0).map((rect) => Math.round(rect.top)));
          if (tops.size > 1) broken.push(`${match[0]} (in “${(text.textContent ?? "").trim().slice(0, 60)}”)`);
        }
      }
    }
    return broken;
  }, selector);
}
