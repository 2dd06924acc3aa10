// The client guides of docs/clients.md, run with the real client packages: mcp-remote (the stdio bridge
// that Claude Desktop, Cursor and Codex can launch) through the whole OAuth flow with a person approving
// in the browser, and the MCP Inspector's CLI with a personal API key. The SDK and the CLI have their
// own suites (e2e/cli, sdk/).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";
import { freePort } from "../support/app";
import { appAndBrowser } from "../support/browser";
import { chooseAndApprove, newPerson } from "../support/consent";

const require = createRequire(import.meta.url);
const MCP_REMOTE = require.resolve("mcp-remote/dist/proxy.js");
const INSPECTOR = path.join(
  path.dirname(require.resolve("@modelcontextprotocol/inspector/package.json")),
  "clients/launcher/build/index.js",
);

type Credential = { id: string; name: string; mode: string };

/** An environment of its own for a client: a fresh HOME, and no desktop to open a browser on. */
function clientEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, ".config"), ...extra };
  for (const name of [
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XDG_CURRENT_DESKTOP",
    "XDG_SESSION_DESKTOP",
    "DESKTOP_SESSION",
    "GNOME_DESKTOP_SESSION_ID",
    "KDE_FULL_SESSION",
    "MATE_DESKTOP_SESSION_ID",
    "LXQT_SESSION_CONFIG",
    "DBUS_SESSION_BUS_ADDRESS",
  ])
    delete env[name];
  return env;
}

/**
 * A "browser" for mcp-remote to open: it records the URL instead of opening anything, so the test's
 * own Chromium is the person's browser. xdg-open runs $BROWSER when no desktop is found; the helpers
 * mcp-remote falls back to (xdg-open, gio, x-www-browser, sensible-browser) are the same recorder,
 * first on PATH, so no real browser can start.
 */
function recordingBrowser(dir: string): { env: Record<string, string>; opened: () => string[] } {
  const bin = path.join(dir, "bin");
  fs.mkdirSync(bin);
  const log = path.join(dir, "opened.txt");
  const command = path.join(bin, "record-url");
  fs.writeFileSync(command, `#!/bin/sh\nfor arg; do url=$arg; done\nprintf '%s\\n' "$url" >> '${log}'\n`, { mode: 0o755 });
  for (const helper of ["xdg-open", "gio", "x-www-browser", "sensible-browser", "www-browser"])
    fs.symlinkSync(command, path.join(bin, helper));
  return {
    env: { BROWSER: command, PATH: `${bin}${path.delimiter}${process.env.PATH}` },
    opened: () => (fs.existsSync(log) ? fs.readFileSync(log, "utf8").split("\n").filter(Boolean) : []),
  };
}

/** JSON-RPC over a child's stdio, one message per line, as an MCP host speaks to a stdio server. */
function stdioRpc(child: ChildProcessWithoutNullStreams) {
  let buffer = "";
  const waiting = new Map<number, (message: { result?: unknown; error?: { message: string } }) => void>();
  child.stdout.on("data", (chunk) => {
    buffer += chunk;
    let newline: number;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (!line) continue;
      const message = JSON.parse(line) as { id?: number; result?: unknown; error?: { message: string } };
      if (typeof message.id === "number") waiting.get(message.id)?.(message);
    }
  });
  let nextId = 0;
  return {
    request(method: string, params: Record<string, unknown> = {}) {
      const id = ++nextId;
      const answer = new Promise<{ result?: unknown; error?: { message: string } }>((resolve) => waiting.set(id, resolve));
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
      return answer.then((message) => {
        if (message.error) throw new Error(`${method}: ${message.error.message}`);
        return message.result as Record<string, unknown>;
      });
    },
    notify(method: string) {
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method })}\n`);
    },
  };
}

/** Resolves with the first match of `pattern` in what the child has printed on stderr so far. */
function waitForStderr(child: ChildProcessWithoutNullStreams, pattern: RegExp, output: () => string, timeout = 30_000) {
  return new Promise<RegExpMatchArray>((resolve, reject) => {
    const check = () => {
      const match = output().match(pattern);
      if (match) {
        clearTimeout(timer);
        child.stderr.off("data", check);
        resolve(match);
      }
    };
    const timer = setTimeout(() => {
      child.stderr.off("data", check);
      reject(new Error(`no ${pattern} within ${timeout} ms; stderr:\n${output()}`));
    }, timeout);
    child.stderr.on("data", check);
    check();
  });
}

/** A personal API key issued on the Clients screen with the given grants. */
async function issueApiKey(page: Page, appUrl: string, name: string, grants: { name: string; mode: "read" | "approve" }[]) {
  await page.goto(`${appUrl}/clients`);
  await page.getByLabel("Key name").fill(name);
  for (const grant of grants) {
    await page.getByRole("checkbox", { name: grant.name, exact: true }).check();
    await page.getByLabel(`Approval mode for ${grant.name}`).selectOption(grant.mode);
  }
  await page.getByRole("button", { name: "Create API key" }).click();
  const key = (await page.getByTestId("new-api-key").textContent())!.trim();
  assert.match(key, /^svc_live_/);
  return key;
}

describe("the client guides (docs/clients.md), with the real client packages", { timeout: 110_000 }, () => {
  const suite = appAndBrowser();
  const homes: string[] = [];
  const newHome = () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "aw-client-home-"));
    homes.push(home);
    return home;
  };
  let children: ChildProcessWithoutNullStreams[] = [];
  before(() => (children = []));
  after(() => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
    for (const home of homes) fs.rmSync(home, { recursive: true, force: true });
  });

  it("mcp-remote (Claude Desktop, Cursor, Codex): the person approves in the browser; tools/list and a call over stdio", async () => {
    const person = await newPerson(suite.browser, suite.app, "remote@example.com", ["Main"]);
    const home = newHome();
    const browser = recordingBrowser(home);
    const callbackPort = await freePort();
    // What the guide's config runs: `npx mcp-remote <base>/mcp` (here the installed package, and a fixed
    // callback port so the test knows it; without one mcp-remote picks its own).
    const child = spawn(process.execPath, [MCP_REMOTE, `${suite.app.baseUrl}/mcp`, String(callbackPort)], {
      env: clientEnv(home, browser.env),
      stdio: ["pipe", "pipe", "pipe"],
    });
    children.push(child);
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const rpc = stdioRpc(child);

    const [, authorizationUrl] = await waitForStderr(child, /Please authorize this client by visiting:\s*(\S+)/, () => stderr);
    const url = new URL(authorizationUrl);
    assert.equal(url.origin + url.pathname, `${suite.app.baseUrl}/oauth/authorize`, "discovered from the 401 and the metadata");
    assert.equal(url.searchParams.get("redirect_uri"), `http://localhost:${callbackPort}/oauth/callback`);
    assert.equal(url.searchParams.get("code_challenge_method"), "S256");
    await waitForStderr(child, /Browser opened automatically/, () => stderr);
    // mcp-remote says so once it has started the opener, which may not have written its line yet
    for (const deadline = Date.now() + 10_000; !browser.opened().length && Date.now() < deadline;)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const params = (href: string) => [...new URL(href).searchParams].sort();
    assert.deepEqual(browser.opened().map(params), [params(authorizationUrl)], "mcp-remote asked the desktop to open exactly that URL");

    // The person opens it (here: the test's Chromium with their passkey) and approves.
    await person.page.goto(authorizationUrl);
    await person.page.waitForURL(/\/consent\?request=/);
    await chooseAndApprove(person.page, [{ name: "Main", mode: "read" }]);
    await person.page.waitForURL(new RegExp(`^http://localhost:${callbackPort}/oauth/callback`));
    await waitForStderr(child, /Proxy established successfully/, () => stderr);

    // The MCP host (Claude Desktop, Cursor, …) now speaks stdio to mcp-remote.
    const initialized = await rpc.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "guide-test-host", version: "1.0.0" },
    });
    assert.equal((initialized.serverInfo as { name: string }).name.length > 0, true);
    rpc.notify("notifications/initialized");
    const { tools } = (await rpc.request("tools/list")) as { tools: { name: string }[] };
    assert.ok(tools.some((tool) => tool.name === "list_credentials") && tools.some((tool) => tool.name === "sign_message"));
    const listed = (await rpc.request("tools/call", { name: "list_credentials", arguments: {} })) as {
      structuredContent: { credentials: Credential[] };
    };
    assert.deepEqual(
      listed.structuredContent.credentials.map(({ name, mode }) => ({ name, mode })),
      [{ name: "Main", mode: "read" }],
    );
    // mcp-remote keeps the tokens in its config folder (~/.mcp-auth), so the next start needs no browser.
    assert.ok(fs.readdirSync(home, { recursive: true, encoding: "utf8" }).some((file) => file.endsWith("_tokens.json")));
    child.kill("SIGTERM");
    await person.context.close();
  });

  it("MCP Inspector CLI with a personal API key: tools/list and tools/call list_credentials", async () => {
    const person = await newPerson(suite.browser, suite.app, "inspector@example.com", ["Main", "Spare"]);
    const key = await issueApiKey(person.page, suite.app.appUrl, "Inspector key", [{ name: "Spare", mode: "approve" }]);
    const home = newHome();
    // The guide's command: npx @modelcontextprotocol/inspector --cli <base>/mcp --transport http
    //   --header "Authorization: Bearer $AGENT_WALLET_API_KEY" --method tools/list
    const inspect = (bearer: string, ...args: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(
          process.execPath,
          [
            INSPECTOR,
            "--cli",
            `${suite.app.baseUrl}/mcp`,
            "--transport",
            "http",
            "--header",
            `Authorization: Bearer ${bearer}`,
            "--format",
            "json",
            ...args,
          ],
          { env: clientEnv(home), stdio: ["pipe", "pipe", "pipe"] },
        );
        children.push(child);
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk) => (stdout += chunk));
        child.stderr.on("data", (chunk) => (stderr += chunk));
        child.on("exit", (code) => resolve({ code, stdout, stderr }));
      });

    const [listed, called] = await Promise.all([
      inspect(key, "--method", "tools/list"),
      inspect(key, "--method", "tools/call", "--tool-name", "list_credentials"),
    ]);
    assert.equal(listed.code, 0, listed.stderr);
    // --format json: one object on stdout, the method's result under "result".
    const { tools } = (JSON.parse(listed.stdout) as { result: { tools: { name: string }[] } }).result;
    assert.deepEqual(tools.map((tool) => tool.name).sort(), [
      "cancel_request",
      "get_allowance",
      "get_balance",
      "get_policy",
      "get_request",
      "list_credentials",
      "list_requests",
      "pay_x402",
      "prepare_allowance_payment",
      "register_allowance_slice",
      "request_allowance",
      "send_allowance_payment",
      "send_transaction",
      "sign_message",
      "sign_typed_data",
    ]);
    assert.equal(called.code, 0, called.stderr);
    const { result } = JSON.parse(called.stdout) as { result: { structuredContent: { credentials: Credential[] } } };
    assert.deepEqual(
      result.structuredContent.credentials.map(({ name, mode }) => ({ name, mode })),
      [{ name: "Spare", mode: "approve" }],
    );

    // A wrong key is refused, and the Inspector says so instead of printing tools.
    const refused = await inspect("svc_live_not_a_key", "--method", "tools/list");
    assert.notEqual(refused.code, 0);
    assert.doesNotMatch(refused.stdout, /list_credentials/);
    await person.context.close();
  });
});
