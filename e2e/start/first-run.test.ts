// A first-time user's `npm start`: nothing configured but PORT, as the README's quick start says. It must bring its own
// chain (the Delegation Framework, test USDC, test prices), serve on that port under that port's name, give test funds
// in one tap, connect a real MCP client, offer allowances, and stop its chain with it; a restart is a fresh chain.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { createPublicClient, erc20Abi, http, parseAbi, parseEther, parseUnits, type Address } from "viem";
import { freePort, type RunningApp } from "../support/app";
import { launchBrowser } from "../support/browser";
import { startChain, chainsSetting, type LocalChain } from "../support/chain";
import { agentAsks, newPerson, type Person } from "../support/consent";
import { finishAndConnect } from "../support/mcp-client";
import { npmStart, type NpmStart } from "../support/npm-start";
import { checkScreen, overflow, VIEWPORTS } from "../support/screens";

/** A first-time user's environment: PORT and the data folder, none of the settings that would configure chains or origins. */
function firstRunEnvironment(extra: Record<string, string>): Record<string, string | undefined> {
  const unset = [
    "CHAINS",
    "BASE_URL",
    "APP_URL",
    "DATABASE_URL",
    "TEST_CHAIN",
    "ALLOWANCE_FRAMEWORKS",
    "ALLOWANCE_RELAYERS",
    "PRICE_FEEDS",
  ];
  return { ...Object.fromEntries(unset.map((name) => [name, undefined])), ...extra };
}

const READY = /^Agent Wallet is ready: open (\S+)$/m;
const TEST_CHAIN = /^Local test chain 31337 ready in [\d.]+ s at (http:\/\/127\.0\.0\.1:\d+), test USDC at (0x[0-9a-fA-F]{40})\./m;

/** The parts of a running app the browser and MCP helpers read. */
const appAt = (url: string) => ({ appUrl: url, baseUrl: url }) as RunningApp;

describe("npm start with nothing configured but PORT", { timeout: 300_000 }, () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aw-first-run-"));
  let port: number;
  let url: string;
  let started: NpmStart;
  let rpcUrl: string;
  let usdc: Address;
  let browser: Browser;
  let person: Person;
  let wallet: Address;
  let credentialId: string;

  const start = () => npmStart(firstRunEnvironment({ PORT: String(port), DATA_DIR: dataDir }));

  before(async () => {
    port = await freePort();
    url = `http://localhost:${port}`;
    started = start();
    const output = await started.waitFor(READY);
    [, rpcUrl, usdc] = output.match(TEST_CHAIN) as unknown as [string, string, Address];
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    started?.kill();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("says what it does and how long each step took, and prints the real port's address", () => {
    const output = started.output();
    assert.match(output, /^No CHAINS configured: starting a local test chain \(hardhat\)/m);
    assert.match(output, TEST_CHAIN, "the chain's RPC address, and how long it took");
    assert.match(output, /balances reset when the app restarts/);
    assert.match(output, /^Started in [\d.]+ s\.$/m);
    assert.equal(output.match(READY)![1], url, "the address to open names PORT");
  });

  it("serves on Node 24 or later: on a machine whose Node is older, from tools/node24, saying so in one line", () => {
    const output = started.output();
    const served = /^Agent Wallet listening on port \d+, on Node ((\d+)\.\d+\.\d+)$/m.exec(output);
    assert.ok(served, `the server says which Node it runs on:\n${output}`);
    assert.ok(Number(served[2]) >= 24, `served on Node ${served[1]}`);
    // `npm` runs on the Node on PATH: the machine's, which the tests themselves need not run on.
    const machine = spawnSync("node", ["-p", "process.versions.node"], { encoding: "utf8" }).stdout.trim();
    const notices = output.match(/^Node .* running on Node .*$/gm) ?? [];
    if (Number(machine.split(".")[0]) < 24) {
      assert.equal(notices.length, 1, notices.join("\n"));
      const said = `Node ${machine} is (past its end of life|older than Node 24): running on Node ${served[1]} from tools/node24`;
      assert.match(notices[0], new RegExp(`^${said.replaceAll(".", "\\.")}$`));
    } else assert.deepEqual(notices, [], "a maintained Node runs it itself, and nothing is said");
  });

  it("OAuth discovery names the real port: issuer, endpoints and the /mcp resource", async () => {
    const server = (await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json()) as Record<string, string>;
    assert.equal(server.issuer, url);
    for (const endpoint of ["authorization_endpoint", "token_endpoint", "registration_endpoint"])
      assert.ok(server[endpoint].startsWith(`${url}/`), `${endpoint}: ${server[endpoint]}`);
    const resource = (await (await fetch(`${url}/.well-known/oauth-protected-resource/mcp`)).json()) as { resource: string };
    assert.equal(resource.resource, `${url}/mcp`);
  });

  it("its chain 31337 has USDC's contract: USD Coin, USDC, 6 decimals, EIP-712 version 2", async () => {
    const client = createPublicClient({ transport: http(rpcUrl) });
    const read = (functionName: "name" | "symbol" | "decimals" | "version") =>
      client.readContract({ address: usdc, abi: [...erc20Abi, ...parseAbi(["function version() view returns (string)"])], functionName });
    assert.equal(await client.getChainId(), 31337);
    assert.deepEqual(await Promise.all([read("name"), read("symbol"), read("decimals"), read("version")]), ["USD Coin", "USDC", 6, "2"]);
  });

  it("a new wallet gets test ETH and test USDC in one tap, and Wallets says the chain is a test chain", async () => {
    person = await newPerson(browser, appAt(url), "first-run@example.test", ["Main"]);
    const { page } = person;
    await page.goto(`${url}/wallets`);
    await page.getByRole("note").filter({ hasText: "Test chain: its coins, USDC and prices are test values" }).waitFor();
    assert.match(await page.getByRole("note").filter({ hasText: "Test chain" }).innerText(), /balances reset when the app restarts/);
    wallet = (await page.locator(".row .mono").first().innerText()).trim() as Address;
    const holdings = page.getByRole("group", { name: "What Main holds" });
    await holdings.getByText(/^0 ETH/).waitFor();
    await holdings.getByText(/^0 USDC/).waitFor();

    await page.getByRole("button", { name: "Add test funds to Main" }).click();
    await page.getByRole("status").filter({ hasText: "Added 1 test ETH and 100 test USDC to Main." }).waitFor();
    await holdings.getByText("1 ETH (≈ $2,000.00)").waitFor();
    await holdings.getByText("100 USDC (≈ $100.00)").waitFor();

    for (const viewport of VIEWPORTS) {
      await page.setViewportSize(viewport);
      assert.deepEqual(await checkScreen(page, `first-run-wallets-test-funds-${viewport.name}`), [], "no serious accessibility issue");
      assert.equal(await overflow(page), 0, `nothing scrolls sideways at ${viewport.width} px`);
    }

    const client = createPublicClient({ transport: http(rpcUrl) });
    assert.equal(await client.getBalance({ address: wallet }), parseEther("1"), "on chain, not only on the page");
    assert.equal(
      await client.readContract({ address: usdc, abi: erc20Abi, functionName: "balanceOf", args: [wallet] }),
      parseUnits("100", 6),
    );
  });

  it("a real MCP client on that port gets through OAuth, with the allowance mode offered at consent", async () => {
    const { page } = person;
    const { provider, callback } = await agentAsks(appAt(url), page, "First-run agent");
    await page.getByRole("checkbox", { name: "Main", exact: true }).check();
    const mode = page.getByLabel("Approval mode for Main");
    assert.equal(
      await mode.locator('option[value="allowance"]').count(),
      1,
      "allowances work on npm start's own chain (framework and relayer passed to the app)",
    );
    assert.equal(await page.getByRole("note").filter({ hasText: "allowance mode is not offered" }).count(), 0);
    await mode.selectOption("read");
    await page.getByRole("button", { name: "Approve with passkey" }).click();
    const code = (await callback.received).get("code")!;
    await callback.close();
    const client = await finishAndConnect(url, provider, code);
    try {
      const tools = (await client.listTools()).tools.map((tool) => tool.name);
      assert.ok(tools.includes("get_balance"), tools.join(", "));
      const listed = await client.callTool({ name: "list_credentials", arguments: {} });
      const credentials = (listed.structuredContent as { credentials: { id: string; address: string }[] }).credentials;
      assert.equal(credentials[0].address.toLowerCase(), wallet.toLowerCase());
      credentialId = credentials[0].id;
      const balance = await client.callTool({ name: "get_balance", arguments: { credential_id: credentialId, tokens: [usdc] } });
      const read = balance.structuredContent as { wei: string; tokens: { symbol: string | null; balance: string | null }[] };
      assert.equal(read.wei, parseEther("1").toString(), "the agent reads the test funds from the app's own chain");
      assert.deepEqual(
        read.tokens.map(({ symbol, balance }) => ({ symbol, balance })),
        [{ symbol: "USDC", balance: parseUnits("100", 6).toString() }],
      );
    } finally {
      await client.close();
    }
  });

  it("test funds are refused, saying why, on any chain that is not the app's own test chain", async () => {
    await person.page.goto(`${url}/wallets`);
    const refused = await person.page.evaluate(async (id) => {
      const response = await fetch(`/api/credentials/${id}/test-funds`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ chainId: 1 }),
      });
      return { status: response.status, body: (await response.json()) as { error: string; message: string } };
    }, credentialId);
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error, "not_test_chain");
    assert.match(refused.body.message, /not this app's local test chain/);
  });

  it("stops its chain with the app; started again, the chain is fresh and the page shows no old balance", async () => {
    await started.interrupt();
    const answers = () =>
      fetch(rpcUrl, { method: "POST", body: "{}" }).then(
        () => true,
        () => false,
      );
    for (const deadline = Date.now() + 10_000; (await answers()) && Date.now() < deadline;)
      await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(await answers(), false, "the test chain stopped with the app");
    started = start();
    const output = await started.waitFor(READY);
    const [, newRpcUrl] = output.match(TEST_CHAIN)!;
    const { page } = person;
    await page.goto(`${url}/wallets`);
    const holdings = page.getByRole("group", { name: "What Main holds" });
    await holdings.getByText(/^0 ETH/).waitFor();
    await holdings.getByText(/^0 USDC/).waitFor();
    assert.equal(await createPublicClient({ transport: http(newRpcUrl) }).getBalance({ address: wallet }), 0n);
  });
});

describe("npm start with CHAINS configured", { timeout: 200_000 }, () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aw-configured-"));
  let chain: LocalChain;
  let started: NpmStart;
  let url: string;
  let browser: Browser;

  before(async () => {
    chain = await startChain();
    const port = await freePort();
    started = npmStart(firstRunEnvironment({ PORT: String(port), DATA_DIR: dataDir, CHAINS: chainsSetting(chain) }));
    url = (await started.waitFor(READY)).match(READY)![1];
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    started?.kill();
    await chain?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("starts no chain of its own, offers no test funds, and consent says why there is no allowance mode", async () => {
    assert.doesNotMatch(started.output(), /local test chain/i);
    const person = await newPerson(browser, appAt(url), "configured@example.test", ["Main"]);
    await person.page.goto(`${url}/wallets`);
    await person.page.getByRole("group", { name: "What Main holds" }).getByText(/ETH/).waitFor();
    assert.equal(await person.page.getByRole("button", { name: /Add test funds/ }).count(), 0);
    assert.equal(await person.page.getByRole("note").filter({ hasText: "Test chain" }).count(), 0);

    const { callback } = await agentAsks(appAt(url), person.page, "Configured agent");
    const why = person.page.getByRole("note").filter({ hasText: "The allowance mode is not offered here" });
    assert.match(await why.innerText(), /Local dev chain has no Delegation Framework/);
    await callback.close();
  });
});
