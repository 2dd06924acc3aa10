// The device authorization grant (RFC 8628) end to end: the protocol at the token endpoint (pending, slow_down,
// access_denied, one winner among concurrent polls, registration of the grant), and `agent-wallet login` in a
// pseudo-terminal while the person types the code and approves in Chromium with a virtual passkey. Then the
// terminal's side of a wait (the URL once, a spinner that fits, Ctrl-C's one safe next step), login reusing
// the CLI's registration, and logout revoking the token.
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import type { RunningApp } from "../support/app";
import { appAndBrowser } from "../support/browser";
import { newPerson, type Person } from "../support/consent";
import { approveDevice, cliEnv, cliLogin, DEVICE_PROMPT, runCli, startCliInTerminal, waitForOutput } from "../support/cli";
import { AgentWalletClient, AuthenticationError } from "agent-wallet/sdk";

const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

async function post(url: string, body: Record<string, string>) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(body).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function registerClient(app: RunningApp, metadata: Record<string, unknown>) {
  const response = await fetch(`${app.baseUrl}/oauth/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ client_name: "Device Agent", token_endpoint_auth_method: "none", ...metadata }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Text as a terminal shows it: escape sequences removed, split where the cursor returns or a line ends. */
function terminalSegments(output: string): string[] {
  return output
    .replace(/\u001b\[[0-9;?]*[A-Za-z]/g, "")
    .split(/\r\n|\r|\n/)
    .filter(Boolean);
}

describe("the device authorization grant and the CLI at a terminal", { timeout: 300_000 }, () => {
  const suite = appAndBrowser();
  let app: RunningApp;
  let person: Person;
  before(async () => {
    app = suite.app;
    person = await newPerson(suite.browser, app, "device@example.com", ["Main"]);
  });

  it("is discovered by device_authorization_endpoint, with the seed's grant_types_supported unchanged", async () => {
    const metadata = (await (await fetch(`${app.baseUrl}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    assert.deepEqual(metadata.grant_types_supported, ["authorization_code", "refresh_token"]);
    assert.equal(metadata.device_authorization_endpoint, `${app.baseUrl}/oauth/device_authorization`);
  });

  it("only a client that registered the grant may start; pending, slow_down, denied; one of many concurrent polls wins", async () => {
    const endpoint = `${app.baseUrl}/oauth/device_authorization`;
    const token = `${app.baseUrl}/oauth/token`;
    const plain = await registerClient(app, { redirect_uris: ["http://localhost:8123/callback"] });
    assert.equal(plain.status, 201);
    const refused = await post(endpoint, { client_id: String(plain.body.client_id) });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error, "unauthorized_client");
    assert.equal((await post(endpoint, { client_id: "c_unknown" })).body.error, "invalid_client");

    // A device-only client needs no redirect URI.
    const device = await registerClient(app, { grant_types: [DEVICE_GRANT, "refresh_token"] });
    assert.equal(device.status, 201, JSON.stringify(device.body));
    assert.deepEqual(device.body.grant_types, [DEVICE_GRANT, "refresh_token"]);
    const clientId = String(device.body.client_id);

    const started = await post(endpoint, { client_id: clientId, scope: "mcp offline_access", resource: `${app.baseUrl}/mcp` });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    const { device_code: deviceCode, user_code: userCode } = started.body as { device_code: string; user_code: string };
    assert.match(userCode, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    assert.ok(Buffer.from(deviceCode, "base64url").length >= 32, "a device code of at least 256 bits");
    assert.equal(started.body.verification_uri, `${app.appUrl}/device`);
    assert.equal(started.body.verification_uri_complete, `${app.appUrl}/device?user_code=${userCode}`);
    assert.equal(started.body.expires_in, 600);
    assert.equal(started.body.interval, 5);

    const poll = (id = clientId, code = deviceCode) => post(token, { grant_type: DEVICE_GRANT, client_id: id, device_code: code });
    assert.equal((await poll()).body.error, "authorization_pending");
    assert.equal((await poll()).body.error, "slow_down", "a poll sooner than the interval");
    assert.equal((await poll(String(plain.body.client_id))).body.error, "invalid_grant", "another client's device code");
    assert.equal((await poll(clientId, "not-a-device-code")).body.error, "invalid_grant");

    // Typed in lower case without the dash: the same code. A wrong code changes nothing.
    const { page } = person;
    await page.goto(`${app.appUrl}/device`);
    await page.getByLabel("Code").fill("BCDF-GHJK" === userCode ? "CDFG-HJKL" : "BCDF-GHJK");
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("alert").filter({ hasText: "No device is waiting for this code" }).waitFor();
    await approveDevice(page, `${app.appUrl}/device`, userCode.replace("-", "").toLowerCase(), [{ name: "Main", mode: "read" }]);

    // After slow_down the interval is 10 s; the approved code is then claimed by many polls at once.
    await new Promise((resolve) => setTimeout(resolve, 10_500));
    const polls = await Promise.all(Array.from({ length: 8 }, () => poll()));
    const winners = polls.filter((answer) => answer.status === 200);
    assert.equal(winners.length, 1, JSON.stringify(polls.map((answer) => answer.body.error ?? "tokens")));
    assert.equal(winners[0].body.expires_in, 3600);
    assert.equal(winners[0].body.token_type, "Bearer");
    assert.equal(winners[0].body.scope, "mcp offline_access");
    assert.equal(typeof winners[0].body.refresh_token, "string");
    assert.equal((await poll()).body.error, "invalid_grant", "a device code is spent once");
    const wallet = new AgentWalletClient({ baseUrl: app.baseUrl, accessToken: String(winners[0].body.access_token) });
    assert.deepEqual(
      (await wallet.listCredentials()).credentials.map(({ name, mode }) => ({ name, mode })),
      [{ name: "Main", mode: "read" }],
    );

    const denied = await post(endpoint, { client_id: clientId });
    await approveDevice(page, `${app.appUrl}/device`, String(denied.body.user_code), [], "deny");
    const answer = await poll(clientId, String(denied.body.device_code));
    assert.equal(answer.body.error, "access_denied");
    assert.equal(answer.status, 400);
  });

  it("login in a terminal: the code and the address once, a spinner that fits, and the terminal goes on by itself", async () => {
    const { env, configDir } = cliEnv();
    const run = startCliInTerminal(["login", "--no-browser", "--base-url", app.baseUrl], env, 40);
    let result;
    try {
      const [, userCode, address] = await waitForOutput(run, DEVICE_PROMPT);
      await waitForOutput(run, /Waiting for your/);
      await approveDevice(person.page, address, userCode, [{ name: "Main", mode: "approve" }]);
      result = await run.result;
    } finally {
      if (run.child.exitCode === null) run.child.kill();
    }
    assert.equal(result.code, 0, result.stdout);
    const segments = terminalSegments(result.stdout);
    assert.equal(segments.filter((segment) => segment === `${app.appUrl}/device`).length, 1, "the address once, on its own line");
    const frames = segments.filter((segment) => /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] /.test(segment));
    assert.ok(frames.length > 0, "a spinner while waiting");
    for (const frame of frames) assert.ok([...frame].length < 40, `the spinner fits 40 columns: ${JSON.stringify(frame)}`);
    assert.match(result.stdout, /Signed in to .* as "Agent Wallet CLI"/);
    const first = JSON.parse(fs.readFileSync(path.join(configDir, "session.json"), "utf8"));

    // Logging in again reuses the registration.
    const again = await cliLogin(app.baseUrl, person.page, env, [{ name: "Main", mode: "approve" }]);
    assert.equal(again.code, 0, again.stderr);
    const second = JSON.parse(fs.readFileSync(path.join(configDir, "session.json"), "utf8"));
    assert.equal(second.clientId, first.clientId, "the same client, not another registration");
    assert.notEqual(second.tokens.accessToken, first.tokens.accessToken);

    // A mistyped wallet name gets a suggestion.
    const typo = await runCli(["balance", "mian", "--chain", "31337"], env);
    assert.equal(typo.code, 4, typo.stderr);
    assert.match(typo.stderr, /No credential "mian" in this grant \(granted: Main\)\. Did you mean "Main"\?/);

    // Ctrl-C while waiting for an approval: one safe next step, and the request is not asked twice.
    const waiting = startCliInTerminal(["sign-message", "Main", "Interrupted"], env, 40);
    let interrupted;
    try {
      await waitForOutput(waiting, /Waiting for your/);
      waiting.child.stdin!.write("\x03");
      interrupted = await waiting.result;
    } finally {
      if (waiting.child.exitCode === null) waiting.child.kill();
    }
    assert.equal(interrupted.code, 130, interrupted.stdout);
    const shown = terminalSegments(interrupted.stdout);
    assert.equal(shown.filter((segment) => /^http:\/\/\S+\/approvals\/rq_\S+$/.test(segment)).length, 1, "the approval URL once");
    const [, requestId] = interrupted.stdout.match(/To resume: agent-wallet request wait (rq_\S+)/) ?? assert.fail(interrupted.stdout);
    assert.doesNotMatch(interrupted.stdout, /Run the command again/);
    const pending = JSON.parse((await runCli(["requests", "--status", "pending", "--json"], env)).stdout) as {
      requests: { request_id: string }[];
    };
    assert.deepEqual(
      pending.requests.map((request) => request.request_id),
      [requestId],
    );

    // Logout revokes the token at the service, and keeps the registration for the next login.
    const logout = await runCli(["logout"], env);
    assert.equal(logout.code, 0, logout.stderr);
    assert.match(logout.stdout, /the access is revoked there/);
    const revoked = new AgentWalletClient({ baseUrl: app.baseUrl, accessToken: second.tokens.accessToken });
    await assert.rejects(revoked.listCredentials(), AuthenticationError);
    assert.equal(JSON.parse(fs.readFileSync(path.join(configDir, "clients.json"), "utf8"))[app.baseUrl].clientId, first.clientId);
  });
});
