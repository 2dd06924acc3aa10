// The CLI's sensitive commands run as a child process against the started app,
// whose tools talk to a real local EVM node (hardhat): the person approves or
// rejects each request in Chromium with a virtual passkey, and the test checks
// the CLI's output, its exit codes, and the chain. Once with a personal API key,
// once with an OAuth login through the browser; then the SDK's waitForRequest.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { parseEther, recoverTypedDataAddress, verifyMessage } from "viem";
import { startApp, type RunningApp } from "../support/app";
import { launchBrowser } from "../support/browser";
import { chainsSetting, startChain, type LocalChain } from "../support/chain";
import { chooseGrant, newPerson, type Grant, type Person } from "../support/consent";
import { cliEnv, cliLogin, runCli, startCli, waitForOutput, WAITING, type CliResult } from "../support/cli";
import { AgentWalletClient, WaitTimeoutError, type RequestView } from "agent-wallet/sdk";
import { orderTypedData } from "../support/fixtures";

const TYPED_DATA = orderTypedData("Agent Wallet CLI Test", "three teas");

const GRANTS: Grant[] = [
  // sign-typed-data asks for an order, no permit: refusing unlimited approvals would refuse it unread.
  { name: "Main", mode: "approve", unlimitedApprovals: "allow" },
  { name: "Spare", mode: "read" },
];

function json<T = Record<string, unknown>>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${result.code}): ${result.stdout}\n${result.stderr}`);
  }
}

/**
 * Clicks a button of the approval screen until the page reacts: a click that
 * lands before React hydrated the server-rendered page does nothing, so it is
 * repeated while the button is still there and enabled. The page reacts with a
 * status line, which the refresh that follows replaces with the request's new
 * status badge (the buttons are only rendered for a pending request): either
 * counts. An error the page shows (role alert) fails the test with its text.
 */
async function clickUntil(page: Page, button: "Approve with passkey" | "Reject", message: RegExp, badge: RegExp) {
  const target = page.getByRole("button", { name: button });
  const outcome = page.getByRole("status").filter({ hasText: message }).or(page.getByText(badge));
  // The page's own alerts, not Next's route announcer (also role=alert), which reads out the new title after a refresh.
  const alert = page.locator('[role="alert"]:not(#__next-route-announcer__)').filter({ hasText: /\S/ });
  const deadline = Date.now() + 30_000;
  for (;;) {
    if ((await target.count()) && (await target.isEnabled({ timeout: 500 }).catch(() => false)))
      await target.click({ timeout: 2000 }).catch(() => {});
    try {
      await outcome.or(alert).first().waitFor({ timeout: 2000 });
    } catch {
      if (Date.now() > deadline) throw new Error(`the approval screen did not answer ${button} with ${message} or ${badge}`);
      continue;
    }
    if (await alert.first().isVisible()) throw new Error(`the approval screen said: ${await alert.first().textContent()}`);
    return;
  }
}

/** The person opens the approval link and approves with the passkey (or rejects). */
async function decide(page: Page, approvalUrl: string, decision: "approve" | "reject", shows: string[] = []) {
  await page.goto(approvalUrl);
  for (const text of shows) await page.getByText(text).first().waitFor();
  if (decision === "approve") await clickUntil(page, "Approve with passkey", /^Approved and (signed|sent)/, /^(completed|submitted)$/);
  else await clickUntil(page, "Reject", /^Rejected/, /^rejected$/);
}

/** The CLI child, killed if the test failed before it ended. */
async function withCli<T>(run: ReturnType<typeof startCli>, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } finally {
    if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill("SIGTERM");
  }
}

/** A personal API key issued on the Clients screen. */
async function issueApiKey(app: RunningApp, page: Page, name: string, grants: Grant[]): Promise<string> {
  await page.goto(`${app.appUrl}/clients`);
  await page.getByLabel("Key name").fill(name);
  for (const grant of grants) await chooseGrant(page, grant);
  await page.getByRole("button", { name: "Create API key" }).click();
  const key = (await page.getByTestId("new-api-key").textContent())!.trim();
  assert.match(key, /^svc_live_/);
  return key;
}

describe("the CLI's sensitive commands against the real tools and a local chain", { timeout: 600_000 }, () => {
  let chain: LocalChain;
  let app: RunningApp;
  let browser: Browser;
  let person: Person;
  let mainAddress: `0x${string}`;
  let typedDataFile: string;
  const credentials: Record<string, { env: NodeJS.ProcessEnv; apiKey?: string }> = {};

  before(async () => {
    chain = await startChain();
    app = await startApp({ env: { CHAINS: chainsSetting(chain) } });
    browser = await launchBrowser();
    person = await newPerson(browser, app, "cli-requests@example.com", ["Main", "Spare"]);
    const apiKey = await issueApiKey(app, person.page, "CLI requests key", GRANTS);
    credentials["API key"] = { env: cliEnv({ AGENT_WALLET_API_KEY: apiKey, AGENT_WALLET_URL: app.baseUrl }).env, apiKey };
    const oauth = cliEnv().env;
    const login = await cliLogin(app.baseUrl, person.page, oauth, GRANTS);
    assert.equal(login.code, 0, login.stderr);
    credentials["OAuth login"] = { env: oauth };

    const listed = await runCli(["credentials", "--json"], credentials["API key"].env);
    assert.equal(listed.code, 0, listed.stderr);
    const main = json<{ credentials: { name: string; address: string }[] }>(listed).credentials.find(
      (credential) => credential.name === "Main",
    )!;
    mainAddress = main.address as `0x${string}`;
    typedDataFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "aw-typed-")), "order.json");
    fs.writeFileSync(typedDataFile, JSON.stringify(TYPED_DATA, null, 2));
  });
  after(async () => {
    await person?.context.close();
    await browser?.close();
    await app?.stop();
    await chain?.stop();
  });

  for (const via of ["API key", "OAuth login"] as const) {
    describe(`with ${via === "API key" ? "a personal API key" : "an OAuth login"}`, () => {
      const env = () => credentials[via].env;

      it("balance (--chain 31337, or by default the only chain) shows the funded balance (human and --json)", async () => {
        await chain.fund(mainAddress, "10");
        const machine = await runCli(["balance", "Main", "--chain", "31337", "--json"], env());
        assert.equal(machine.code, 0, machine.stderr);
        const balance = json(machine);
        assert.equal(balance.wei, parseEther("10").toString());
        assert.equal(balance.formatted, "10");
        assert.equal(balance.symbol, "ETH");
        assert.equal(balance.chain_id, 31337);
        assert.equal(String(balance.address).toLowerCase(), mainAddress.toLowerCase());

        // Without --chain: the service's only chain.
        const human = await runCli(["balance", "Main"], env());
        assert.equal(human.code, 0, human.stderr);
        assert.match(human.stdout, new RegExp(`^10 ETH\\s+\\(Main ${mainAddress} on Local dev chain\\)`, "i"));
      });

      it("sign-message --no-wait --json: pending; requests lists it; request cancel cancels it, a second cancel exits 4", async () => {
        const created = await runCli(["sign-message", "Main", `Not now (${via})`, "--no-wait", "--json"], env());
        assert.equal(created.code, 0, created.stderr);
        const request = json<RequestView>(created);
        assert.equal(request.status, "pending");
        assert.match(request.request_id, /^rq_/);
        assert.equal(request.approval_url, `${app.appUrl}/approvals/${request.request_id}`);

        const listed = await runCli(["requests", "--json"], env());
        assert.equal(listed.code, 0, listed.stderr);
        const entry = json<{ requests: RequestView[] }>(listed).requests.find((candidate) => candidate.request_id === request.request_id);
        assert.equal(entry?.status, "pending");
        const pendingOnly = await runCli(["requests", "--status", "pending"], env());
        assert.equal(pendingOnly.code, 0, pendingOnly.stderr);
        assert.match(pendingOnly.stdout, new RegExp(`^ID\\s+KIND\\s+STATUS[\\s\\S]*${request.request_id}\\s+sign_message\\s+pending`));

        const cancelled = await runCli(["request", "cancel", request.request_id], env());
        assert.equal(cancelled.code, 0, cancelled.stderr);
        assert.match(cancelled.stdout, new RegExp(`Cancelled request ${request.request_id}`));
        const again = await runCli(["request", "cancel", request.request_id], env());
        assert.equal(again.code, 4, `${again.stdout}\n${again.stderr}`);
        assert.match(again.stderr, new RegExp(`Request ${request.request_id} is cancelled; only a pending request can be cancelled`));
        const shown = await runCli(["request", "get", request.request_id, "--json"], env());
        assert.equal(json<RequestView>(shown).status, "cancelled");
      });

      it("sign-message --wait 45, approved in the browser: exit 0, a signature viem verifies; the spinner shows the URL", async () => {
        const message = `Pay invoice #7 (${via})`;
        const run = startCli(["sign-message", "Main", message, "--wait", "45"], env());
        const result = await withCli(run, async () => {
          const [, requestId, approvalUrl] = await waitForOutput(run, WAITING, 30_000, "stderr");
          assert.equal(approvalUrl, `${app.appUrl}/approvals/${requestId}`);
          await new Promise((resolve) => setTimeout(resolve, 500)); // the CLI is long-polling by now
          await decide(person.page, approvalUrl, "approve", [message]);
          return run.result;
        });
        assert.equal(result.code, 0, result.stderr);
        const [, signature] = result.stdout.match(/^Signature: (0x[0-9a-f]+)$/m) ?? [];
        assert.ok(signature, result.stdout);
        assert.equal(await verifyMessage({ address: mainAddress, message, signature: signature as `0x${string}` }), true);
        assert.ok(!result.stdout.includes("Waiting for your approval"), "the spinner stays off stdout");
      });

      it("send --value 0.01eth --wait 45, approved: exit 0, the tx hash; the recipient got exactly 0.01 ETH", async () => {
        await chain.fund(mainAddress, "10");
        const recipient = privateKeyToAccount(generatePrivateKey()).address;
        const before = await chain.client.getBalance({ address: recipient });
        const run = startCli(["send", "Main", "--chain", "31337", "--to", recipient, "--value", "0.01eth", "--wait", "45"], env());
        const result = await withCli(run, async () => {
          const [, , approvalUrl] = await waitForOutput(run, WAITING, 30_000, "stderr");
          await decide(person.page, approvalUrl, "approve", ["0.01 ETH", recipient]);
          return run.result;
        });
        assert.equal(result.code, 0, result.stderr);
        const [, hash] = result.stdout.match(/^Transaction: (0x[0-9a-f]{64})$/m) ?? [];
        assert.ok(hash, result.stdout);
        assert.equal((await chain.client.getBalance({ address: recipient })) - before, parseEther("0.01"));
        const receipt = await chain.client.getTransactionReceipt({ hash: hash as `0x${string}` });
        assert.equal(receipt.status, "success");
        assert.equal(receipt.from.toLowerCase(), mainAddress.toLowerCase());
      });

      it("request wait on a request the person rejects: exit 3, says rejected", async () => {
        const created = await runCli(["sign-message", "Main", `Drain everything (${via})`, "--no-wait", "--json"], env());
        assert.equal(created.code, 0, created.stderr);
        const request = json<RequestView>(created);
        const run = startCli(["request", "wait", request.request_id, "--timeout", "45"], env());
        const result = await withCli(run, async () => {
          await waitForOutput(run, WAITING, 30_000, "stderr");
          await decide(person.page, request.approval_url, "reject");
          return run.result;
        });
        assert.equal(result.code, 3, `${result.stdout}\n${result.stderr}`);
        assert.match(result.stdout, /Status:\s+rejected/);
        assert.match(result.stderr, new RegExp(`Request ${request.request_id} was rejected`));

        const machine = await runCli(["request", "wait", request.request_id, "--json"], env());
        assert.equal(machine.code, 3);
        assert.equal(json<RequestView>(machine).status, "rejected");
        assert.equal(JSON.parse(machine.stderr).error.exitCode, 3);
      });

      it("sign-typed-data <file>, approved: the signature recovers to the wallet", async () => {
        const run = startCli(["sign-typed-data", "Main", typedDataFile, "--wait", "45", "--json"], env());
        const result = await withCli(run, async () => {
          const [, , approvalUrl] = await waitForOutput(run, WAITING, 30_000, "stderr");
          await decide(person.page, approvalUrl, "approve", ["Agent Wallet CLI Test", "three teas"]);
          return run.result;
        });
        assert.equal(result.code, 0, result.stderr);
        const done = json<RequestView>(result);
        assert.equal(done.status, "completed");
        assert.equal(done.kind, "sign_typed_data");
        const { EIP712Domain: _domain, ...types } = TYPED_DATA.types;
        const signer = await recoverTypedDataAddress({ ...TYPED_DATA, types, signature: done.signature as `0x${string}` } as Parameters<
          typeof recoverTypedDataAddress
        >[0]);
        assert.equal(signer.toLowerCase(), mainAddress.toLowerCase());
      });

      it("a sensitive command on a read-only credential exits 4 with the tool's message", async () => {
        const human = await runCli(["sign-message", "Spare", "hi", "--no-wait"], env());
        assert.equal(human.code, 4, `${human.stdout}\n${human.stderr}`);
        assert.match(
          human.stderr,
          /^agent-wallet: Credential \S+ is granted read-only: this client may not ask for signatures with it\. Run `agent-wallet status`/m,
        );
        const machine = await runCli(["send", "Spare", "--chain", "31337", "--to", mainAddress, "--value", "1", "--json"], env());
        assert.equal(machine.code, 4, `${machine.stdout}\n${machine.stderr}`);
        assert.match(JSON.parse(machine.stderr).error.message, /is granted read-only/);
        assert.equal(machine.stdout, "");
      });
    });
  }

  describe("the SDK's waitForRequest against the real server", () => {
    it("resolves with the completed request once the person approves in the browser", async () => {
      const client = new AgentWalletClient({ baseUrl: app.baseUrl, apiKey: credentials["API key"].apiKey! });
      const main = (await client.listCredentials()).credentials.find((credential) => credential.name === "Main")!;
      const request = await client.signMessage({ credential_id: main.id, message: "SDK waits" });
      assert.equal(request.status, "pending");
      const updates: string[] = [];
      const waiting = client.waitForRequest(request.request_id, { timeout: 60_000, onUpdate: (view) => updates.push(view.status) });
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await decide(person.page, request.approval_url, "approve");
      const done = await waiting;
      assert.equal(done.status, "completed");
      assert.equal(done.request_id, request.request_id);
      assert.equal(
        await verifyMessage({ address: main.address as `0x${string}`, message: "SDK waits", signature: done.signature as `0x${string}` }),
        true,
      );
      assert.equal(updates.at(-1), "completed");
    });

    it("rejects with WaitTimeoutError when the timeout passes first (still pending), with the reason when aborted", async () => {
      const client = new AgentWalletClient({ baseUrl: app.baseUrl, apiKey: credentials["API key"].apiKey! });
      const main = (await client.listCredentials()).credentials.find((credential) => credential.name === "Main")!;
      const request = await client.signMessage({ credential_id: main.id, message: "Nobody answers" });
      const started = Date.now();
      await assert.rejects(client.waitForRequest(request.request_id, { timeout: 2500 }), (error: unknown) => {
        assert.ok(error instanceof WaitTimeoutError, String(error));
        assert.equal(error.requestId, request.request_id);
        assert.equal(error.lastStatus, "pending");
        assert.equal(error.message, `Request ${request.request_id} is still pending`);
        return true;
      });
      const elapsed = Date.now() - started;
      assert.ok(elapsed >= 2000 && elapsed < 10_000, `gave up after ${elapsed} ms`);
      assert.equal((await client.getRequest({ request_id: request.request_id })).status, "pending");

      const controller = new AbortController();
      const reason = new Error("stop waiting");
      setTimeout(() => controller.abort(reason), 500);
      const abortedAt = Date.now();
      await assert.rejects(
        client.waitForRequest(request.request_id, { timeout: 60_000, signal: controller.signal }),
        (error: unknown) => error === reason,
      );
      assert.ok(Date.now() - abortedAt < 5000, "the abort ends the long poll at once");
      assert.equal((await client.cancelRequest({ request_id: request.request_id })).status, "cancelled");
    });
  });
});
