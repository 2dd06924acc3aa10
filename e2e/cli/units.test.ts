// The CLI in the person's terms, as a child process against the started app with a personal API key: whoami and
// status name the account and the server, status says the limits in the chain's coin and the token's units (from
// get_policy's symbol and decimals), balance shows the tokens the chain lists and the limits cap beside the coin, each with its value from
// a Chainlink feed on the local chain (@chainlink/contracts' MockV3Aggregator; none from a stale one), and a refusal
// by a cap reads in ETH and in the token's own units.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseEther, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startApp, type RunningApp } from "../support/app";
import { chainsSetting, startChain, type LocalChain } from "../support/chain";
import { deployErc20 } from "../support/contracts";
import { cliEnv, runCli } from "../support/cli";
import { deployPriceFeed, setRound } from "@/test-chain/price-feeds";
import { createUser } from "../support/oauth";
import { db } from "@/lib/db";
import { randomBase62, randomId, sha256Hex } from "@/lib/crypto";
import { createGrant } from "@/lib/oauth/grants";

describe("the CLI in the person's units", { timeout: 180_000 }, () => {
  let chain: LocalChain;
  let app: RunningApp;
  let env: NodeJS.ProcessEnv;
  let token: Address;
  let staleToken: Address;
  let owner: Address;

  before(async () => {
    chain = await startChain();
    owner = privateKeyToAccount(generatePrivateKey()).address;
    await chain.fund(owner, "2.5");
    token = await deployErc20(chain, { name: "Test Dollar", symbol: "TUSD", supply: parseEther("1234.5"), holder: owner });
    staleToken = await deployErc20(chain, { name: "Stale Dollar", symbol: "OLD", supply: parseEther("7"), holder: owner });
    const eth = await deployPriceFeed(chain, { answer: 2000_00000000n, decimals: 8 });
    const dollar = await deployPriceFeed(chain, { answer: 1_00000000n, decimals: 8 });
    const stale = await deployPriceFeed(chain, { answer: 1_00000000n, decimals: 8 });
    await setRound(chain, stale, { answer: 1_00000000n, updatedAt: BigInt(Math.floor(Date.now() / 1000) - 2 * 3600) });
    const feeds = { [chain.chainId]: { native: eth, tokens: { [token]: dollar, [staleToken]: stale } } };
    // The chain lists OLD as a token every wallet shows: balance names it without being asked.
    const chains = JSON.stringify(JSON.parse(chainsSetting(chain)).map((entry: object) => ({ ...entry, tokens: [staleToken] })));
    app = await startApp({ env: { CHAINS: chains, PRICE_FEEDS: JSON.stringify(feeds), PRICE_CURRENCY: "USD" } });
    // A personal API key as the Clients screen issues one (stored the same way; the screen's passkey step is its own test's).
    const user = await createUser("carol@example.com");
    const credentialId = (
      await db().credential.create({ data: { id: randomId("cr_"), userId: user.id, name: "Main", kind: "evm", address: owner } })
    ).id;
    const key = `svc_live_${randomBase62(43)}`;
    const clientId = randomId("k_");
    await db().$transaction(async (tx) => {
      await tx.client.create({
        data: { id: clientId, kind: "api_key", name: "Budget bot", userId: user.id, keyHash: sha256Hex(key), keyHint: key.slice(-4) },
      });
      const policy = {
        native: { per_transaction: String(parseEther("1")), per_day: String(parseEther("1")) },
        tokens: [{ chain_id: chain.chainId, token, per_transaction: String(parseEther("100")) }],
      };
      await createGrant(tx, {
        userId: user.id,
        clientId,
        scope: "mcp",
        credentials: [{ credentialId, mode: "approve", policy }],
        now: new Date(),
      });
    });
    env = cliEnv({ AGENT_WALLET_API_KEY: key, AGENT_WALLET_URL: app.baseUrl }).env;
  });
  after(async () => {
    await app?.stop();
    await chain?.stop();
  });

  it("whoami and status name the account, the client as the person named it, and the server", async () => {
    const whoami = await runCli(["whoami"], env);
    assert.equal(whoami.code, 0, whoami.stderr);
    assert.match(whoami.stdout, new RegExp(`^Service:\\s+${app.baseUrl}$`, "m"));
    assert.match(whoami.stdout, /^Account:\s+ca…@example\.com$/m);
    assert.match(whoami.stdout, /^Signed in:\s+with the personal API key "Budget bot" \(svc_live_\S{4}…\)$/m);
    const status = await runCli(["status"], env);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^Account:\s+ca…@example\.com$/m);
    const json = JSON.parse((await runCli(["whoami", "--json"], env)).stdout);
    assert.deepEqual(json.account, { email_hint: "ca…@example.com", client_name: "Budget bot" });
  });

  it("get_policy gives each capped token's symbol and decimals, and status says the limits in those units", async () => {
    const status = await runCli(["status"], env);
    assert.equal(status.code, 0, status.stderr);
    assert.match(
      status.stdout,
      /^Main\s+approve\s+0x[0-9a-fA-F]{40}\s+up to 1 ETH a transaction · 1 ETH a day \(1 ETH left\) · up to 100 TUSD a transaction$/m,
    );
    // What the SDK read from get_policy: the new fields beside the caps, in the token's smallest unit.
    const [main] = JSON.parse((await runCli(["status", "--json"], env)).stdout).credentials;
    assert.deepEqual(main.policy.remaining.tokens, [
      { chain_id: chain.chainId, token, per_transaction: String(parseEther("100")), per_day: null, symbol: "TUSD", decimals: 18 },
    ]);
    assert.deepEqual(
      main.policy.remaining.native_by_chain.map((entry: { chain_name: string; symbol: string }) => [entry.chain_name, entry.symbol]),
      [["Local dev chain", "ETH"]],
    );
  });

  it("balance shows the coin, the tokens the chain lists and the limits cap, in their units and value; --tokens names others", async () => {
    const human = await runCli(["balance", "Main"], env);
    assert.equal(human.code, 0, human.stderr);
    const lines = human.stdout.trimEnd().split("\n");
    assert.match(lines[0], new RegExp(`^2\\.5 ETH ≈ \\$5,000\\.00\\s+\\(Main ${owner} on Local dev chain\\)$`));
    assert.equal(lines[1], `7 OLD  (token ${staleToken})`, "a token the chain lists, never named by a request or a limit");
    assert.equal(lines[2], `1234.5 TUSD ≈ $1,234.50  (token ${token})`);
    assert.equal(lines.length, 3);
    assert.doesNotMatch(human.stdout.replace(/0x[0-9a-fA-F]{40}/g, "0x…"), /\d{16}/, "never an amount in 16 or more raw digits");
    const priced = JSON.parse((await runCli(["balance", "Main", "--json"], env)).stdout);
    assert.deepEqual(priced.fiat, { currency: "USD", amount: "5000", text: "$5,000.00" });
    assert.deepEqual(priced.tokens[1].fiat, { currency: "USD", amount: "1234.5", text: "$1,234.50" });

    const machine = JSON.parse((await runCli(["balance", "Main", "--json", "--tokens", `${owner},${staleToken}`], env)).stdout);
    // An address that is no token: its balance cannot be read, and nothing is guessed. A stale feed gives no value.
    assert.deepEqual(machine.tokens, [
      { token: owner, symbol: null, decimals: null, balance: null, formatted: null, fiat: null },
      { token: staleToken, symbol: "OLD", decimals: 18, balance: parseEther("7").toString(), formatted: "7", fiat: null },
    ]);
    const unpriced = await runCli(["balance", "Main", "--tokens", staleToken], env);
    assert.equal(unpriced.stdout.trimEnd().split("\n")[1], `7 OLD  (token ${staleToken})`);
    const bad = await runCli(["balance", "Main", "--tokens", "usdc"], env);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--tokens takes ERC-20 contract addresses/);
  });

  it("a refusal by a cap reads in ETH and in the token's units", async () => {
    // no --chain: the service has one
    const native = await runCli(["send", "Main", "--to", owner, "--value", "1.5eth", "--no-wait"], env);
    assert.equal(native.code, 4, native.stderr);
    assert.match(native.stderr, /Refused by the spending policy: 1\.5 ETH is over your limit of 1 ETH a transaction for Main/);
    const transfer = `0xa9059cbb${owner.slice(2).toLowerCase().padStart(64, "0")}${parseEther("150").toString(16).padStart(64, "0")}`;
    const tokens = await runCli(
      ["send", "Main", "--to", token, "--value", "0", "--data", transfer, "--chain", String(chain.chainId), "--no-wait"],
      env,
    );
    assert.equal(tokens.code, 4, tokens.stderr);
    assert.match(tokens.stderr, /: 150 TUSD is over your limit of 100 TUSD a transaction for Main/);
  });
});
