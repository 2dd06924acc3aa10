// Every screen checked with axe-core in Chromium (WCAG 2.x A and AA; no serious or critical violation), signed out and
// signed in, at a phone's width and a desktop's, each in light and dark mode (prefers-color-scheme). Each is written
// to test-results/screenshots as <screen>-<width>-<scheme>.png, which CI keeps for people to look at.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { appAndBrowser } from "../support/browser";
import { agentAsks, connectAgent, newPerson } from "../support/consent";
import { checkScreen, VIEWPORTS } from "../support/screens";

const SCHEMES = ["light", "dark"] as const;

describe("accessibility (axe-core)", { timeout: 600_000 }, () => {
  const suite = appAndBrowser();

  it("every screen, at 375 and 1280 px, light and dark, has no serious or critical violation", async () => {
    const { appUrl } = suite.app;
    const person = await newPerson(suite.browser, suite.app, "a11y@example.com");
    const { client } = await connectAgent(suite.app, person.page, "Signer", [{ name: "Main", mode: "approve" }]);
    const credentials = (await client.callTool({ name: "list_credentials", arguments: {} })).structuredContent as {
      credentials: { id: string }[];
    };
    const asked = (await client.callTool({
      name: "sign_message",
      arguments: { credential_id: credentials.credentials[0].id, message: "Accessible?" },
    })) as unknown as { structuredContent: { approval_url: string } };
    const approvalUrl = asked.structuredContent.approval_url;
    // A consent screen waiting for the person; it can be opened again until it is answered.
    const { callback } = await agentAsks(suite.app, person.page, "Reader");
    const consentUrl = person.page.url();
    await callback.close();

    /** Each screen: its file name, who looks at it, and how it is opened (resolving once it is ready to be read). */
    const screens: { name: string; signedIn: boolean; open: (page: Page) => Promise<unknown> }[] = [
      { name: "sign-in", signedIn: false, open: (page) => page.goto(appUrl) },
      { name: "approval-signed-out", signedIn: false, open: (page) => page.goto(approvalUrl) },
      { name: "device-signed-out", signedIn: false, open: (page) => page.goto(`${appUrl}/device`) },
      { name: "consent", signedIn: true, open: (page) => page.goto(consentUrl) },
      {
        name: "approval",
        signedIn: true,
        open: async (page) => {
          await page.goto(approvalUrl);
          await page.getByRole("button", { name: "Approve with passkey" }).waitFor();
        },
      },
      ...["wallets", "approvals", "clients", "connect", "settings", "audit", "device"].map((name) => ({
        name,
        signedIn: true,
        open: (page: Page) => page.goto(`${appUrl}/${name}`),
      })),
      { name: "not-found", signedIn: true, open: (page) => page.goto(`${appUrl}/no-such-page`) },
    ];

    const found: Record<string, string[]> = {};
    const signedIn = await person.context.storageState();
    for (const { width, height } of VIEWPORTS) {
      for (const colorScheme of SCHEMES) {
        const visitor = await suite.browser.newContext({ viewport: { width, height }, colorScheme });
        const member = await suite.browser.newContext({ viewport: { width, height }, colorScheme, storageState: signedIn });
        for (const screen of screens) {
          const page = await (screen.signedIn ? member : visitor).newPage();
          await screen.open(page);
          // Hydrated: a control disabled until then would be left out of the contrast checks.
          await page.waitForLoadState("networkidle");
          const file = `${screen.name}-${width}-${colorScheme}`;
          const violations = await checkScreen(page, file);
          if (violations.length) found[file] = violations;
          await page.close();
        }
        await visitor.close();
        await member.close();
      }
    }
    await client.close();
    await person.context.close();
    assert.deepEqual(found, {}, "serious or critical axe violations");
  });
});
