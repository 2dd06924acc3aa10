// `agent-wallet login` and `status` as a child process against the started app: login shows a code, the address to
// enter it at and a QR code of the address with the code, decoded here from the printed block characters; the
// person scans it as if with a phone and approves there, and the CLI goes on by itself. `status` then
// shows the service, the session's expiry, the credential's mode and limits and the pending request; signed out,
// `status` and the other commands say what to do next.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import jsQR from "jsqr";
import QRCode from "qrcode";
import type { Browser } from "playwright-core";
import { startApp, type RunningApp } from "../support/app";
import { launchBrowser } from "../support/browser";
import { newPerson, type Person } from "../support/consent";
import { cliEnv, DEVICE_PROMPT, runCli, startCli, waitForOutput } from "../support/cli";

const QR_BLOCK = /Or scan this code with your phone:\n\n([^]*?)\n$/;

/**
 * Reads a QR code printed with half blocks (black on white; each character is two modules, one above the
 * other) back into pixels and decodes it with jsQR. A half block in white (`ESC[37m`) is the light margin.
 */
function decodeTerminalQr(printed: string): string | undefined {
  const lines = printed
    .replace(/\u001b\[0m\u001b\[37m[▀▄]/g, " ")
    .replace(/\u001b\[[0-9;]*m/g, "")
    .split("\n")
    .filter(Boolean);
  const halves: Record<string, [number, number]> = { "█": [1, 1], "▀": [1, 0], "▄": [0, 1], " ": [0, 0] };
  const modules = lines.flatMap((line) => {
    const cells = [...line].map((char) => halves[char] ?? assert.fail(`unexpected character ${JSON.stringify(char)} in the QR code`));
    return [cells.map(([top]) => top), cells.map(([, bottom]) => bottom)];
  });
  const scale = 4;
  const quiet = 4; // modules of margin around what was printed
  const size = (n: number) => (n + 2 * quiet) * scale;
  const width = size(modules[0].length);
  const height = size(modules.length);
  const pixels = new Uint8ClampedArray(width * height * 4).fill(255);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const dark = modules[Math.floor(y / scale) - quiet]?.[Math.floor(x / scale) - quiet] === 1;
      if (dark) pixels.fill(0, (y * width + x) * 4, (y * width + x) * 4 + 3);
    }
  }
  return jsQR(pixels, width, height)?.data;
}

describe("agent-wallet login (URL and QR code) and status against the app", { timeout: 180_000 }, () => {
  let app: RunningApp;
  let browser: Browser;
  let person: Person;
  before(async () => {
    app = await startApp();
    browser = await launchBrowser();
    person = await newPerson(browser, app, "status@example.com", ["Main"]);
  });
  after(async () => {
    await person?.context.close();
    await browser?.close();
    await app?.stop();
  });

  it("signed out, status shows the service and every command says to run `agent-wallet login`", async () => {
    const { env } = cliEnv();
    const status = await runCli(["status", "--base-url", app.baseUrl], env);
    assert.equal(status.code, 2, status.stderr);
    assert.match(status.stdout.trimEnd(), new RegExp(`^Service:\\s+${app.baseUrl}\\nSigned in:\\s+no$`));
    const next = /^agent-wallet: Not signed in: run `agent-wallet login` to sign in, or set AGENT_WALLET_API_KEY to a personal API key/m;
    assert.match(status.stderr, next);
    for (const command of [["credentials"], ["requests"], ["whoami"], ["sign-message", "Main", "hi"]]) {
      const result = await runCli([...command, "--base-url", app.baseUrl], env);
      assert.equal(result.code, 2, `${command[0]}: ${result.stderr}`);
      assert.match(result.stderr, next, command[0]);
    }
    const json = await runCli(["status", "--json", "--base-url", app.baseUrl], env);
    assert.deepEqual(JSON.parse(json.stdout), { baseUrl: app.baseUrl, signedIn: false });
    assert.match(JSON.parse(json.stderr).error.message, /run `agent-wallet login` to sign in/);
  });

  it("login shows a code, the address and its QR code; the phone that scans it signs in; status shows grant, limits, pending", async () => {
    const { env } = cliEnv();
    const run = startCli(["login", "--no-browser", "--base-url", app.baseUrl], env);
    try {
      const [, userCode, address] = await waitForOutput(run, DEVICE_PROMPT);
      assert.equal(address, `${app.appUrl}/device`, "the short address, on its own line");
      await waitForOutput(run, /Waiting for your approval \(code [A-Z]{4}-[A-Z]{4}\)/, 30_000, "stderr");
      const printed = run.stdout().match(QR_BLOCK)?.[1];
      assert.ok(printed, `a QR code after the address:\n${run.stdout()}`);
      const scanned = decodeTerminalQr(printed);
      assert.equal(scanned, `${app.appUrl}/device?user_code=${userCode}`, "the printed QR code carries the address with the code");
      assert.equal(
        printed.trimEnd(),
        (await QRCode.toString(scanned, { type: "terminal", small: true })).trimEnd(),
        "qrcode's terminal rendering",
      );

      // The phone opens the scanned address: the code is filled in, the person checks it and goes on.
      const { page } = person;
      await page.goto(scanned);
      assert.equal(await page.getByLabel("Code").inputValue(), userCode);
      await page.getByRole("button", { name: "Continue" }).click();
      await page.waitForURL(/\/consent\?request=/);
      await page.getByText("the device that showed you the code").waitFor();
      await page.getByRole("checkbox", { name: "Main", exact: true }).check();
      await page.getByLabel("Approval mode for Main").selectOption("approve");
      await page.getByLabel("Spending limits for Main").selectOption({ label: "Up to 0.05 ETH a transaction, 0.2 ETH a day" });
      await page.getByRole("button", { name: "Approve with passkey" }).click();
      await page.getByRole("heading", { name: "Device connected" }).waitFor();
      const result = await run.result;
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /Signed in to .* as "Agent Wallet CLI"/);
    } finally {
      if (run.child.exitCode === null) run.child.kill();
    }

    const asked = await runCli(["sign-message", "Main", "Status check", "--no-wait", "--json"], env);
    assert.equal(asked.code, 0, asked.stderr);
    const request = JSON.parse(asked.stdout) as { request_id: string; status: string; approval_url: string };
    assert.equal(request.status, "pending");

    const status = await runCli(["status"], env);
    assert.equal(status.code, 0, status.stderr);
    const [connection, credentials, pending, requests] = status.stdout.split("\n\n");
    assert.match(connection, new RegExp(`^Service:\\s+${app.baseUrl}$`, "m"));
    assert.match(connection, /^Account:\s+st…@example\.com$/m);
    assert.match(connection, /^Signed in:\s+as "Agent Wallet CLI" \(client \S+\)$/m);
    assert.match(connection, /^Access until:\s+\d{4}-\d\d-\d\dT\S+Z \(in (59|60) min\)$/m);
    assert.match(connection, /^Stays connected:\s+yes$/m);
    assert.match(credentials, /^CREDENTIAL\s+MODE\s+ADDRESS\s+LIMITS\n/);
    // The preset chosen, and the unlimited-approvals box left as it starts: checked.
    const limits = "up to 0\\.05 ETH a transaction · 0\\.2 ETH a day \\(0\\.2 ETH left\\) · refuses unlimited approvals";
    assert.match(credentials, new RegExp(`^Main\\s+approve\\s+0x[0-9a-fA-F]{40}\\s+${limits}$`, "m"));
    assert.equal(pending, "Pending requests: 1");
    assert.match(requests, new RegExp(`^${request.request_id}\\s+sign_message\\s+Main\\s+${request.approval_url}$`, "m"));

    const json = JSON.parse((await runCli(["status", "--json"], env)).stdout);
    assert.equal(json.signedIn, true);
    assert.equal(json.auth, "oauth");
    assert.deepEqual(
      json.credentials.map((credential: { name: string; mode: string; policy: { policy: unknown } }) => [
        credential.name,
        credential.mode,
        credential.policy.policy,
      ]),
      [
        [
          "Main",
          "approve",
          { native: { per_transaction: "50000000000000000", per_day: "200000000000000000" }, no_unlimited_approvals: true },
        ],
      ],
    );
    assert.deepEqual(
      json.pending.map((view: { request_id: string }) => view.request_id),
      [request.request_id],
    );
    assert.ok(Date.parse(json.expiresAt) > Date.now());
  });
});
