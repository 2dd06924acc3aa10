// The browser side of hardening, in Chromium against the started app: every page carries a nonce-based
// Content-Security-Policy that Next's own scripts satisfy (the pages work, no violation is reported), an
// injected inline script does not run, framing is refused, and no page with account data is cached.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { appAndBrowser } from "../support/browser";
import { newPerson } from "../support/consent";

const PAGES = ["/", "/clients", "/connect", "/settings", "/audit", "/approvals"];

describe("page security headers and CSP", { timeout: 180_000 }, () => {
  const suite = appAndBrowser();

  it("every page has a fresh nonce policy with no inline script, no framing and no caching, and no violation", async () => {
    const person = await newPerson(suite.browser, suite.app, "csp@example.com");
    const violations: string[] = [];
    person.page.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    const nonces = new Set<string>();
    for (const path of PAGES) {
      const response = await person.page.goto(`${suite.app.appUrl}${path}`);
      const headers = response!.headers();
      const policy = headers["content-security-policy"];
      const scripts = /script-src ([^;]+)/.exec(policy)?.[1] ?? "";
      const nonce = /'nonce-([A-Za-z0-9+/=]+)'/.exec(scripts)?.[1];
      assert.ok(nonce, `${path}: a nonce in script-src (${policy})`);
      nonces.add(nonce);
      assert.match(scripts, /'strict-dynamic'/, path);
      assert.doesNotMatch(scripts, /unsafe-inline|unsafe-eval/, path);
      assert.match(policy, /frame-ancestors 'none'/, path);
      assert.match(policy, /object-src 'none'/, path);
      assert.match(policy, /base-uri 'none'/, path);
      assert.equal(headers["cache-control"], "no-store", path);
      assert.equal(headers["referrer-policy"], "no-referrer", path);
    }
    assert.equal(nonces.size, PAGES.length, "a new nonce for every page load");
    // The pages worked under the policy: the signed-in navigation is interactive.
    await person.page.goto(`${suite.app.appUrl}/settings`);
    await person.page.getByRole("button", { name: "Sign out everywhere" }).waitFor();
    assert.ok(await person.page.getByRole("button", { name: "Sign out everywhere" }).isEnabled(), "the page hydrated");
    assert.deepEqual(violations, [], "Next's own scripts satisfy the policy");
    await person.context.close();
  });

  it("markup injected into a page cannot run a script", async () => {
    const context = await suite.browser.newContext();
    const page = await context.newPage();
    const blocked: string[] = [];
    page.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
    });
    // An attacker's markup in the HTML (as a stored injection would put it), served with the page's own headers.
    await page.route(`${suite.app.appUrl}/`, async (route) => {
      const response = await route.fetch();
      const body = (await response.text()).replace("<body>", '<body><script>window.injected = "ran"</script>');
      await route.fulfill({ response, body });
    });
    await page.goto(`${suite.app.appUrl}/`);
    await page.getByRole("button", { name: "Create account with passkey" }).waitFor();
    assert.equal(await page.evaluate(() => (window as { injected?: string }).injected), undefined);
    assert.ok(blocked.length > 0, "the browser reported the blocked script");
    await context.close();
  });
});
