// The corners a person reaches from elsewhere, in Chromium on a phone, in light and in dark mode: an authorization
// error (a page Next does not render) and a consent that is closed look like the app, with its header and a way on; a
// device's code page has the header and asks to compare the code with the terminal's; the device's consent repeats
// the code (only the one of its request); the CLI's row on /clients says how it connected rather than "Sends you back
// to" nothing. Each screen passes axe and is written to test-results/screenshots.
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import type { RunningApp } from "../support/app";
import { appAndBrowser } from "../support/browser";
import { newPerson, type Person } from "../support/consent";
import { register } from "../support/oauth";
import { checkScreen, overflow } from "../support/screens";

const PHONE = { width: 375, height: 812 };
const SCHEMES = ["light", "dark"] as const;
const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

/** What makes a page look like the app: its colours, type, and header. */
async function look(page: Page) {
  return page.evaluate(() => {
    const body = getComputedStyle(document.body);
    const header = document.querySelector("header");
    return {
      background: body.backgroundColor,
      text: body.color,
      font: body.fontFamily,
      header: header && getComputedStyle(header).backgroundColor,
    };
  });
}

describe("error pages and the device's pages, light and dark", { timeout: 300_000 }, () => {
  const suite = appAndBrowser();
  let app: RunningApp;
  let person: Person;
  before(async () => {
    app = suite.app;
    person = await newPerson(suite.browser, app, "corners@example.com", ["Main"]);
    await person.page.setViewportSize(PHONE);
  });

  /** A visitor's page on a phone, in the scheme. */
  async function visitorPage(colorScheme: (typeof SCHEMES)[number]) {
    const context = await suite.browser.newContext({ viewport: PHONE, colorScheme });
    return context.newPage();
  }

  /** The screen fits the phone and passes axe, and is written to test-results/screenshots. */
  async function fits(page: Page, file: string) {
    assert.deepEqual(await checkScreen(page, file), [], `${file}: serious or critical axe violations`);
    assert.equal(await overflow(page), 0, `${file}: nothing scrolls sideways`);
  }

  const backgrounds: string[] = [];
  for (const colorScheme of SCHEMES) {
    it(`an authorization error and a closed consent look like the app and lead on (${colorScheme})`, async () => {
      const page = await visitorPage(colorScheme);
      await page.goto(`${app.appUrl}/no-such-page`);
      const appLook = await look(page);
      backgrounds.push(appLook.background);

      const unknown = await page.goto(`${app.baseUrl}/oauth/authorize?client_id=c_unknown&response_type=code`);
      assert.equal(unknown?.status(), 400);
      await page.getByRole("heading", { level: 1, name: "Unknown application" }).waitFor();
      assert.deepEqual(await look(page), appLook, "the app's colours, type and header");
      await page.getByRole("banner").getByRole("link", { name: "Agent Wallet" }).waitFor();
      await page.getByText("Return to the application and start again.").waitFor();
      await fits(page, `authorize-error-${colorScheme}`);
      await page.getByRole("main").getByRole("link", { name: "Open Agent Wallet" }).click();
      await page.getByRole("button", { name: "Sign in with passkey" }).waitFor();

      // An error the application gets back: the way back to it, and the way into Agent Wallet.
      const client = await register(app, { client_name: "Corner Agent", redirect_uris: ["https://agent.example/callback"] });
      const query = new URLSearchParams({ client_id: client.client_id, redirect_uri: client.redirect_uris[0], response_type: "token" });
      await page.goto(`${app.baseUrl}/oauth/authorize?${query}`);
      await page.getByRole("heading", { level: 1, name: "This request cannot be accepted" }).waitFor();
      assert.deepEqual(await look(page), appLook);
      const main = page.getByRole("main");
      assert.deepEqual(await main.getByRole("link").allInnerTexts(), ["Return to agent.example", "Open Agent Wallet"]);
      await fits(page, `authorize-error-return-${colorScheme}`);

      await page.goto(`${app.appUrl}/consent?request=unknown`);
      await page.getByRole("heading", { level: 1, name: "Unknown request" }).waitFor();
      assert.deepEqual(await look(page), appLook);
      assert.deepEqual(await main.getByRole("link").allInnerTexts(), ["Sign in"]);
      await fits(page, `consent-unknown-${colorScheme}`);
      await page.context().close();

      await person.page.emulateMedia({ colorScheme });
      await person.page.goto(`${app.appUrl}/consent`);
      await person.page.getByRole("heading", { level: 1, name: "No request" }).waitFor();
      await person.page.getByRole("banner").getByText(person.email).waitFor();
      assert.deepEqual(await person.page.getByRole("main").getByRole("link").allInnerTexts(), ["Go to your wallets"]);
      assert.deepEqual(await look(person.page), appLook);
      await fits(person.page, `consent-no-request-${colorScheme}`);
    });

    it(`a device's code: the header, compare the code, the consent repeats it, the client's row (${colorScheme})`, async () => {
      const { page } = person;
      await page.emulateMedia({ colorScheme });
      const device = await register(app, {
        client_name: `Agent Wallet CLI ${colorScheme}`,
        grant_types: [DEVICE_GRANT, "refresh_token"],
        redirect_uris: undefined,
      });
      const started = await fetch(`${app.baseUrl}/oauth/device_authorization`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ client_id: device.client_id, scope: "mcp" }),
      });
      const { user_code: userCode, verification_uri_complete: link } = (await started.json()) as Record<string, string>;

      // Opened from a link or a QR code: the code is filled in, and the person is asked to compare it.
      await page.goto(link);
      await page.getByRole("banner").getByRole("navigation", { name: "Main" }).waitFor();
      const field = page.getByLabel("Code");
      assert.equal(await field.inputValue(), userCode);
      const described = await field.evaluate((input) => document.getElementById(input.getAttribute("aria-describedby") ?? "")?.textContent);
      assert.equal(described, "Check that this code matches the one your terminal shows.");
      await fits(page, `device-code-${colorScheme}`);
      await page.getByRole("button", { name: "Continue" }).click();
      await page.waitForURL(/\/consent\?request=/);
      const consent = new URL(page.url());
      const continues = page.getByText("the device that showed you the code");
      assert.match(await continues.innerText(), new RegExp(`^the device that showed you the code ${userCode} \\(check that it is the one`));
      await fits(page, `consent-device-${colorScheme}`);

      // A code the link makes up is not repeated: only the request's own.
      const madeUp = new URL(consent);
      madeUp.searchParams.set("code", userCode === "BCDF-GHJK" ? "CDFG-HJKL" : "BCDF-GHJK");
      await page.goto(madeUp.toString());
      assert.match(await continues.innerText(), /^the device that showed you the code \(check/);

      await page.goto(consent.toString());
      await page.getByRole("checkbox", { name: "Main", exact: true }).check();
      await page.getByRole("button", { name: "Approve with passkey" }).click();
      await page.getByRole("heading", { level: 1, name: "Device connected" }).waitFor();
      await page.getByRole("banner").getByText(person.email).waitFor();
      assert.deepEqual(await page.getByRole("main").getByRole("link").allInnerTexts(), ["Go to your wallets"]);
      await fits(page, `device-connected-${colorScheme}`);

      await page.goto(`${app.appUrl}/clients`);
      const row = page.getByRole("listitem", { name: `Agent Wallet CLI ${colorScheme}` });
      await row.getByText("Connected with a code its device showed").waitFor();
      assert.ok(!(await row.innerText()).includes("Sends you back to"), "no empty “Sends you back to”");
      await fits(page, `clients-device-${colorScheme}`);
    });
  }

  it("light and dark are different colours", () => {
    assert.equal(new Set(backgrounds).size, 2, backgrounds.join(", "));
  });
});
