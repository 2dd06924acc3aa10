// The CLI as a child process against the started app: login with a code
// (Playwright + a virtual passkey answer the consent), then the
// commands; the same with a personal API key; the SDK's refresh rotation;
// revoked clients' clear errors and exit code 2.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { startApp, type RunningApp } from "../support/app";
import { launchBrowser } from "../support/browser";
import { newPerson } from "../support/consent";
import { cliEnv, cliLogin as deviceLogin, runCli } from "../support/cli";
import { AgentWalletClient, OAuthError, refresh, type TokenSet } from "agent-wallet/sdk";

/** `agent-wallet login --no-browser`; the person approves Main in `mode` with the code the CLI shows. */
async function cliLogin(app: RunningApp, page: Page, env: NodeJS.ProcessEnv, mode: "read" | "approve" = "approve") {
  const result = await deviceLogin(app.baseUrl, page, env, [{ name: "Main", mode }]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /Signed in to .* as "Agent Wallet CLI"/);
  return result;
}

async function revokeOnClientsScreen(app: RunningApp, page: Page, name: string) {
  await page.goto(`${app.appUrl}/clients`);
  page.once("dialog", (dialog) => void dialog.accept());
  await page.getByRole("button", { name: `Revoke ${name}` }).click();
  await page.getByRole("listitem", { name }).getByText("Revoked", { exact: true }).waitFor();
}

describe("the agent-wallet CLI and the SDK against the app", { timeout: 300_000 }, () => {
  let app: RunningApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  before(async () => {
    app = await startApp();
    browser = await launchBrowser();
    ({ context, page } = await newPerson(browser, app, "cli@example.com"));
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await app?.stop();
  });

  it("without a login every command says to sign in (exit 2); --help works for every command", async () => {
    const { env } = cliEnv();
    const none = await runCli(["credentials", "--base-url", app.baseUrl], env);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /Not signed in: run `agent-wallet login`/);
    const help = await runCli(["request", "wait", "--help"], env);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Usage: agent-wallet request wait <id>/);
    assert.match(help.stdout, /Exit codes:/);
    const usage = await runCli(["balance", "Main", "--chain", "mainnet"], env);
    assert.equal(usage.code, 1);
    const down = await runCli(["credentials", "--api-key", "svc_live_x"], { ...env, AGENT_WALLET_URL: "http://127.0.0.1:9" });
    assert.equal(down.code, 5, down.stderr);
    assert.match(
      down.stderr,
      /Could not reach http:\/\/127\.0\.0\.1:9 .*\. Check the URL \(--base-url or \$AGENT_WALLET_URL\) and your connection, then try again/,
    );
  });

  it("login through the browser, whoami, credentials, the file's mode; revoked on the Clients screen: exit 2; logout", async () => {
    const { env, configDir } = cliEnv();
    await cliLogin(app, page, env);
    const file = path.join(configDir, "session.json");
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal(fs.statSync(configDir).mode & 0o777, 0o700);
    const stored = JSON.parse(fs.readFileSync(file, "utf8"));
    assert.equal(stored.baseUrl, app.baseUrl);
    assert.ok(stored.clientId && stored.tokens.accessToken && stored.tokens.refreshToken);

    const whoami = await runCli(["whoami"], env);
    assert.equal(whoami.code, 0, whoami.stderr);
    assert.match(whoami.stdout, new RegExp(`Service:\\s+${app.baseUrl}`));
    assert.match(whoami.stdout, /Agent Wallet CLI/);
    assert.match(whoami.stdout, /Credentials:\s+Main \(approve\)/);

    const credentials = await runCli(["credentials", "--json"], env);
    assert.equal(credentials.code, 0, credentials.stderr);
    const listed = JSON.parse(credentials.stdout).credentials;
    assert.deepEqual(
      listed.map(({ name, mode, kind }: { name: string; mode: string; kind: string }) => ({ name, mode, kind })),
      [{ name: "Main", mode: "approve", kind: "evm" }],
    );
    assert.match(listed[0].address, /^0x[0-9a-fA-F]{40}$/);
    const human = await runCli(["credentials"], env);
    assert.match(human.stdout, /^NAME\s+MODE\s+KIND\s+ADDRESS\s+ID\nMain\s+approve\s+evm\s+0x/);

    await revokeOnClientsScreen(app, page, "Agent Wallet CLI");
    const revoked = await runCli(["credentials"], env);
    assert.equal(revoked.code, 2, revoked.stderr);
    assert.match(
      revoked.stderr,
      /This client's access was revoked \(The (client|grant) was revoked\)\. Run `agent-wallet login` to sign in again\./,
    );

    const logout = await runCli(["logout"], env);
    assert.equal(logout.code, 0);
    assert.ok(!fs.existsSync(file), "the session file is gone");
    const after = await runCli(["whoami"], env);
    assert.equal(after.code, 2);
    assert.match(after.stderr, /Not signed in/);
  });

  it("a personal API key (from the Clients screen) by env or --api-key; a bad key is exit 2", async () => {
    await page.goto(`${app.appUrl}/clients`);
    await page.getByLabel("Key name").fill("CLI key");
    await page.getByRole("checkbox", { name: "Main", exact: true }).check();
    await page.getByLabel("Approval mode for Main").selectOption("read");
    await page.getByRole("button", { name: "Create API key" }).click();
    const key = (await page.getByTestId("new-api-key").textContent())!.trim();
    assert.match(key, /^svc_live_/);

    const { env } = cliEnv({ AGENT_WALLET_API_KEY: key, AGENT_WALLET_URL: app.baseUrl });
    const whoami = await runCli(["whoami", "--json"], env);
    assert.equal(whoami.code, 0, whoami.stderr);
    const me = JSON.parse(whoami.stdout);
    assert.equal(me.auth, "api_key");
    assert.ok(!whoami.stdout.includes(key), "the key is not echoed");
    assert.deepEqual(
      me.credentials.map(({ name, mode }: { name: string; mode: string }) => ({ name, mode })),
      [{ name: "Main", mode: "read" }],
    );

    const { env: flagged, configDir } = cliEnv();
    const piped = await runCli(["credentials", "--json", "--api-key", "-", "--base-url", app.baseUrl], flagged, `${key}\n`);
    assert.equal(piped.code, 0, piped.stderr);
    assert.equal(JSON.parse(piped.stdout).credentials[0].name, "Main");
    assert.equal(piped.stderr, "", "a key from stdin draws no warning");

    const credentials = await runCli(["credentials", "--json", "--api-key", key, "--base-url", app.baseUrl], flagged);
    assert.equal(credentials.code, 0, credentials.stderr);
    assert.equal(JSON.parse(credentials.stdout).credentials[0].name, "Main");
    assert.match(credentials.stderr, /warning: a key on the command line is visible in `ps`/);
    // Neither way leaves the key anywhere on disk.
    const stored = fs.existsSync(configDir) ? fs.readdirSync(configDir, { recursive: true }).map(String) : [];
    for (const file of stored) {
      const full = path.join(configDir, file);
      if (fs.statSync(full).isFile()) assert.ok(!fs.readFileSync(full, "utf8").includes(key), `${file} holds the key`);
    }

    const bad = await runCli(["credentials", "--api-key", "svc_live_notakey", "--base-url", app.baseUrl], flagged);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /The API key was refused \(The API key is invalid\)\. Issue a new key on the Clients screen of the app\./);
  });

  it("the SDK refreshes a refused token, saving the rotated one first; the spent one revokes the client: CLI exit 2", async () => {
    const { env, configDir } = cliEnv();
    await cliLogin(app, page, env, "read");
    const stored = JSON.parse(fs.readFileSync(path.join(configDir, "session.json"), "utf8"));
    const events: string[] = [];
    const saved: TokenSet[] = [];
    const client = new AgentWalletClient({
      baseUrl: app.baseUrl,
      accessToken: "garbage.access.token",
      refreshToken: stored.tokens.refreshToken,
      clientId: stored.clientId,
      // The CLI's tokens are bound to its key (RFC 9449): refreshed only with a proof of it.
      dpopKey: stored.dpopKey,
      fetch: async (input, init) => {
        const authorization = new Headers(init?.headers).get("authorization");
        if (authorization) events.push(`mcp ${authorization.replace(/^\S+ /, "")}`);
        return fetch(input, init);
      },
      onTokens: async (tokens) => {
        await new Promise((resolve) => setTimeout(resolve, 50)); // a slow disk: nothing may run ahead of it
        events.push(`saved ${tokens.accessToken}`);
        saved.push(tokens);
      },
    });
    const { credentials } = await client.listCredentials();
    assert.deepEqual(
      credentials.map(({ name, mode }) => ({ name, mode })),
      [{ name: "Main", mode: "read" }],
    );
    assert.equal(saved.length, 1);
    assert.ok(saved[0].refreshToken && saved[0].refreshToken !== stored.tokens.refreshToken, "the refresh token rotated");
    const savedAt = events.indexOf(`saved ${saved[0].accessToken}`);
    const usedAt = events.indexOf(`mcp ${saved[0].accessToken}`);
    assert.ok(savedAt >= 0 && savedAt < usedAt, `stored before use: ${events.map((event) => event.slice(0, 30)).join(" | ")}`);
    assert.equal(events[0], "mcp garbage.access.token");
    assert.equal((await client.listCredentials()).credentials.length, 1, "the new token keeps working");

    // The old refresh token is spent: presenting it again is a replay, which revokes the client.
    const discovery = await (await import("agent-wallet/sdk")).discover(app.baseUrl);
    await assert.rejects(
      refresh({ tokenEndpoint: discovery.tokenEndpoint, clientId: stored.clientId, refreshToken: stored.tokens.refreshToken }),
      (error: unknown) => error instanceof OAuthError && error.code === "invalid_grant",
    );
    const revoked = await runCli(["whoami"], env);
    assert.equal(revoked.code, 2, revoked.stderr);
    assert.match(revoked.stderr, /revoked.*Run `agent-wallet login` to sign in again\./);
    await assert.rejects(client.listCredentials(), /sign in again/i);
  });
});
