// No dead ends, in Chromium at a phone's width and a desktop's: an approval link opened while signed out says a
// request waits (and nothing of it) and comes back to it after signing in; a 404 keeps the header and offers one way
// on; a new API key has a Copy button and ready lines for the CLI, the SDK and an MCP client. Each screen passes
// axe and is written to test-results/screenshots.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { appAndBrowser } from "../support/browser";
import { connectAgent, newPerson } from "../support/consent";
import { checkScreen, overflow, VIEWPORTS } from "../support/screens";
import { apiKeySnippets } from "@/lib/connect/client-setup";

describe("no dead ends", { timeout: 300_000 }, () => {
  const suite = appAndBrowser();

  for (const viewport of VIEWPORTS) {
    it(`an approval link opened signed out says a request waits, nothing of it, and returns after sign-in (${viewport.name})`, async () => {
      const email = `deep-link-${viewport.name}@example.com`;
      const { page, context } = await newPerson(suite.browser, suite.app, email, ["Rent wallet"]);
      await page.setViewportSize(viewport);
      const { client } = await connectAgent(suite.app, page, "Payroll bot", [{ name: "Rent wallet", mode: "approve" }]);
      const { credentials } = (await client.callTool({ name: "list_credentials", arguments: {} })).structuredContent as {
        credentials: { id: string; address: string }[];
      };
      const asked = (await client.callTool({
        name: "sign_message",
        arguments: { credential_id: credentials[0].id, message: "Pay 1200 to the landlord" },
      })) as unknown as { structuredContent: { approval_url: string } };
      const url = asked.structuredContent.approval_url;

      await context.clearCookies();
      await page.goto(url);
      await page.getByRole("heading", { level: 1, name: "An approval request is waiting" }).waitFor();
      assert.equal(page.url(), url, "the link stays where it points");
      await page.getByRole("navigation", { name: "Main" }).waitFor();
      const shown = await page.locator("body").innerText();
      for (const secret of ["Pay 1200", "landlord", "Payroll bot", "Rent wallet", credentials[0].address, email])
        assert.ok(!shown.toLowerCase().includes(secret.toLowerCase()), `a visitor is not shown ${secret}`);
      assert.deepEqual(await checkScreen(page, `deep-link-signed-out-${viewport.name}`), []);
      assert.equal(await overflow(page), 0);

      await page.getByRole("button", { name: "Sign in with passkey" }).click();
      await page.getByRole("heading", { level: 1, name: "Sign a message" }).waitFor();
      assert.equal(page.url(), url, "signed in, the person is on the same approval page");
      await page.getByText("Pay 1200 to the landlord").waitFor();
      await page.getByRole("button", { name: "Approve with passkey" }).waitFor();
      await client.close();
      await context.close();
    });

    it(`a 404 keeps the header and offers one way on, signed out and signed in (${viewport.name})`, async () => {
      const visitor = await suite.browser.newContext({ viewport });
      const page = await visitor.newPage();
      const response = await page.goto(`${suite.app.appUrl}/no-such-page`);
      assert.equal(response?.status(), 404);
      await page.getByRole("heading", { level: 1, name: "Page not found" }).waitFor();
      await page.getByRole("banner").getByRole("link", { name: "Agent Wallet" }).waitFor();
      assert.deepEqual(await page.getByRole("main").getByRole("link").allInnerTexts(), ["Sign in"]);
      assert.deepEqual(await checkScreen(page, `not-found-signed-out-${viewport.name}`), []);
      assert.equal(await overflow(page), 0);
      await page.getByRole("main").getByRole("link", { name: "Sign in" }).click();
      await page.getByRole("button", { name: "Sign in with passkey" }).waitFor();
      await visitor.close();

      const email = `not-found-${viewport.name}@example.com`;
      const person = await newPerson(suite.browser, suite.app, email, []);
      await person.page.setViewportSize(viewport);
      assert.equal((await person.page.goto(`${suite.app.appUrl}/wallets/nothing/here`))?.status(), 404);
      await person.page.getByRole("heading", { level: 1, name: "Page not found" }).waitFor();
      const header = person.page.getByRole("banner");
      await header.getByText(email).waitFor();
      await header.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Approvals" }).waitFor();
      assert.deepEqual(await person.page.getByRole("main").getByRole("link").allInnerTexts(), ["Go to your wallets"]);
      assert.deepEqual(await checkScreen(person.page, `not-found-signed-in-${viewport.name}`), []);
      assert.equal(await overflow(person.page), 0);
      await person.page.getByRole("main").getByRole("link", { name: "Go to your wallets" }).click();
      await person.page.waitForURL(`${suite.app.appUrl}/wallets`);
      await person.context.close();
    });

    it(`a new API key has a Copy button and ready lines for the CLI, the SDK and an MCP client (${viewport.name})`, async () => {
      const { page, context } = await newPerson(suite.browser, suite.app, `api-key-${viewport.name}@example.com`);
      await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: suite.app.appUrl });
      await page.setViewportSize(viewport);
      await page.goto(`${suite.app.appUrl}/clients`);
      await page.getByLabel("Key name").fill("Deploy key");
      await page.getByRole("checkbox", { name: "Main", exact: true }).check();
      await page.getByRole("button", { name: "Create API key" }).click();
      const key = (await page.getByTestId("new-api-key").textContent())!.trim();
      assert.match(key, /^svc_live_[0-9A-Za-z]{43}$/);

      await page.getByRole("button", { name: "Copy API key" }).click();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key);

      const expected = apiKeySnippets(suite.app.configuredBaseUrl, key);
      const shown = page.getByRole("status").filter({ hasText: "Deploy key" });
      assert.deepEqual(
        await shown.locator("pre").allTextContents(),
        expected.map((snippet) => snippet.code),
      );
      for (const snippet of expected) {
        await shown.getByRole("button", { name: `Copy ${snippet.what}`, exact: true }).click();
        assert.equal(await page.evaluate(() => navigator.clipboard.readText()), snippet.code, `Copy ${snippet.what}`);
      }
      assert.deepEqual(await checkScreen(page, `new-api-key-${viewport.name}`), []);
      assert.equal(await overflow(page), 0);
      await context.close();
    });
  }
});
