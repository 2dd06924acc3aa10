import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ConfigError, parseConfig } from "./index";

const KEY = "A".repeat(43);
const dirs: string[] = [];
function tempDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "aw-config-"));
  dirs.push(dir);
  return dir;
}

function expectConfigError(env: Record<string, string>, variable: string) {
  assert.throws(
    () => parseConfig({ DATA_DIR: tempDir(), ...env }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, `a ConfigError, got ${String(error)}`);
      assert.match(error.message, new RegExp(`\\b${variable}\\b`), `the message names ${variable}: ${error.message}`);
      return true;
    },
  );
}

describe("parseConfig", () => {
  after(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("has defaults: localhost:3000 for both origins, SQLite in the data folder, generated secrets", () => {
    const dir = tempDir();
    const settings = parseConfig({ DATA_DIR: dir });
    assert.equal(settings.baseUrl, "http://localhost:3000");
    assert.equal(settings.appUrl, "http://localhost:3000");
    assert.equal(settings.mcpResource, "http://localhost:3000/mcp");
    assert.equal(settings.port, 3000);
    assert.equal(settings.dataDir, dir);
    assert.equal(settings.databaseUrl, `file:${path.join(dir, "agent-wallet.db")}`);
    assert.equal(settings.jwtKeys.length, 1);
    assert.ok(Buffer.from(settings.jwtKeys[0].secret, "base64url").length >= 32);
    assert.ok(settings.sessionSecret.length >= 32);
    assert.ok(settings.chains.length >= 1);
    assert.equal(settings.rpId, "localhost");
    // generated once: a second read gives the same secrets
    const again = parseConfig({ DATA_DIR: dir });
    assert.deepEqual(again.jwtKeys, settings.jwtKeys);
    assert.equal(again.sessionSecret, settings.sessionSecret);
    const mode = fs.statSync(path.join(dir, "secrets.json")).mode & 0o777;
    assert.equal(mode, 0o600);
  });

  it("PORT alone moves both origins, the MCP resource and the RP ID's origin; set origins stay as set", () => {
    const moved = parseConfig({ DATA_DIR: tempDir(), PORT: "45124" });
    assert.equal(moved.baseUrl, "http://localhost:45124");
    assert.equal(moved.appUrl, "http://localhost:45124");
    assert.equal(moved.mcpResource, "http://localhost:45124/mcp");
    assert.deepEqual(moved.mcpAllowedOrigins, ["http://localhost:45124"]);
    const behindProxy = parseConfig({
      DATA_DIR: tempDir(),
      PORT: "45124",
      APP_URL: "https://wallet.example",
      BASE_URL: "https://api.example",
    });
    assert.equal(behindProxy.appUrl, "https://wallet.example");
    assert.equal(behindProxy.baseUrl, "https://api.example");
  });

  it("TEST_CHAIN must name a configured chain", () => {
    const chain = { chainId: 31337, faucet: "0x" + "1".repeat(40), usdc: "0x" + "2".repeat(40) };
    assert.equal(parseConfig({ DATA_DIR: tempDir(), TEST_CHAIN: JSON.stringify(chain) }).testChain?.chainId, 31337);
    assert.equal(parseConfig({ DATA_DIR: tempDir() }).testChain, null);
    expectConfigError({ TEST_CHAIN: JSON.stringify({ ...chain, chainId: 1 }) }, "TEST_CHAIN");
  });

  it("normalizes origins (trailing slash, case) and derives the MCP resource", () => {
    const settings = parseConfig({ DATA_DIR: tempDir(), BASE_URL: "https://API.Example.com/", APP_URL: "https://app.example.com:8443" });
    assert.equal(settings.baseUrl, "https://api.example.com");
    assert.equal(settings.mcpResource, "https://api.example.com/mcp");
    assert.equal(settings.appUrl, "https://app.example.com:8443");
    assert.equal(settings.rpId, "app.example.com");
  });

  it("BASE_URL=not-a-url throws a ConfigError naming BASE_URL", () => expectConfigError({ BASE_URL: "not-a-url" }, "BASE_URL"));
  it("BASE_URL with a path throws naming BASE_URL", () => expectConfigError({ BASE_URL: "https://api.example.com/v1" }, "BASE_URL"));
  it("BASE_URL with another scheme throws naming BASE_URL", () => expectConfigError({ BASE_URL: "ftp://api.example.com" }, "BASE_URL"));
  it("APP_URL=nope throws naming APP_URL", () => expectConfigError({ APP_URL: "nope" }, "APP_URL"));
  it("plain http on a public host throws in production, naming the variable; loopback and development may use it", () => {
    expectConfigError({ APP_URL: "http://wallet.example.com" }, "APP_URL");
    expectConfigError({ BASE_URL: "http://api.example.com" }, "BASE_URL");
    for (const local of ["http://localhost:3000", "http://127.0.0.1:8080", "http://[::1]:3000"])
      assert.equal(parseConfig({ DATA_DIR: tempDir(), APP_URL: local, BASE_URL: local }).appUrl, local);
    assert.equal(parseConfig({ DATA_DIR: tempDir(), NODE_ENV: "development", APP_URL: "http://wallet.lan" }).appUrl, "http://wallet.lan");
  });
  it("PORT=abc throws naming PORT", () => expectConfigError({ PORT: "abc" }, "PORT"));
  it("client metadata documents come only from public hosts unless CLIENT_METADATA_ALLOW_PRIVATE_HOSTS=true", () => {
    assert.equal(parseConfig({ DATA_DIR: tempDir() }).clientMetadataAllowPrivateHosts, false);
    assert.equal(parseConfig({ DATA_DIR: tempDir(), CLIENT_METADATA_ALLOW_PRIVATE_HOSTS: "true" }).clientMetadataAllowPrivateHosts, true);
    expectConfigError({ CLIENT_METADATA_ALLOW_PRIVATE_HOSTS: "yes" }, "CLIENT_METADATA_ALLOW_PRIVATE_HOSTS");
  });
  it("CHAINS that is not JSON throws naming CHAINS", () => expectConfigError({ CHAINS: "[{not json" }, "CHAINS"));
  it("CHAINS with a bad chain throws naming CHAINS", () =>
    expectConfigError({ CHAINS: JSON.stringify([{ id: -1, name: "", rpcUrl: "x", symbol: "E" }]) }, "CHAINS"));
  it("CHAINS that is an empty array throws naming CHAINS", () => expectConfigError({ CHAINS: "[]" }, "CHAINS"));
  it("DATABASE_URL of an unknown scheme throws naming DATABASE_URL", () =>
    expectConfigError({ DATABASE_URL: "mysql://x" }, "DATABASE_URL"));
  it("a short SESSION_SECRET throws naming SESSION_SECRET", () => expectConfigError({ SESSION_SECRET: "short" }, "SESSION_SECRET"));

  it("MCP_ALLOWED_ORIGINS defaults to the BASE_URL and APP_URL origins, once each", () => {
    assert.deepEqual(parseConfig({ DATA_DIR: tempDir() }).mcpAllowedOrigins, ["http://localhost:3000"]);
    const split = parseConfig({ DATA_DIR: tempDir(), BASE_URL: "https://api.example.com", APP_URL: "https://app.example.com" });
    assert.deepEqual(split.mcpAllowedOrigins, ["https://api.example.com", "https://app.example.com"]);
  });
  it("reads MCP_ALLOWED_ORIGINS as comma-separated origins, normalized, replacing the default", () => {
    const settings = parseConfig({ DATA_DIR: tempDir(), MCP_ALLOWED_ORIGINS: " https://Agent.Example/ , http://localhost:6274,," });
    assert.deepEqual(settings.mcpAllowedOrigins, ["https://agent.example", "http://localhost:6274"]);
  });
  for (const [label, value] of [
    ["a non-URL entry", "https://agent.example,not-a-url"],
    ["an entry with a path", "https://agent.example/app"],
    ["a wildcard", "*"],
    ["an empty list", " , "],
  ] as const) {
    it(`refuses MCP_ALLOWED_ORIGINS with ${label}, naming it`, () =>
      expectConfigError({ MCP_ALLOWED_ORIGINS: value }, "MCP_ALLOWED_ORIGINS"));
  }

  it("reads rate limits as <requests>/<window>, with defaults, and the other limit settings", () => {
    const defaults = parseConfig({ DATA_DIR: tempDir() });
    assert.deepEqual(defaults.rateLimits.mcpPerClient, { points: 1200, seconds: 60 });
    assert.deepEqual(defaults.rateLimits.registerPerIp, { points: 300, seconds: 3600 });
    assert.deepEqual(defaults.rateLimits.clientMetadataPerHost, { points: 30, seconds: 60 });
    assert.equal(defaults.rateLimitIpv6Prefix, 64);
    assert.equal(defaults.trustedProxies, 0);
    assert.equal(defaults.redisUrl, null);
    assert.equal(defaults.unusedClientRetentionMs, 24 * 3_600_000);
    assert.equal(defaults.pendingRequestsPerCredential, 50);
    assert.equal(defaults.revocationRetryMs, 60_000);
    const set = parseConfig({
      DATA_DIR: tempDir(),
      RATE_LIMIT_OAUTH_PER_IP: "10/30s",
      RATE_LIMIT_CLIENT_METADATA_PER_HOST: "5/10s",
      RATE_LIMIT_IPV6_PREFIX: "56",
      TRUSTED_PROXIES: "2",
      REDIS_URL: "redis://127.0.0.1:6379",
      PENDING_REQUESTS_PER_CREDENTIAL: "5",
      ALLOWANCE_REVOCATION_RETRY_SECONDS: "2",
    });
    assert.deepEqual(set.rateLimits.oauthPerIp, { points: 10, seconds: 30 });
    assert.deepEqual(set.rateLimits.clientMetadataPerHost, { points: 5, seconds: 10 });
    assert.equal(set.rateLimitIpv6Prefix, 56);
    assert.equal(set.trustedProxies, 2);
    assert.equal(set.redisUrl, "redis://127.0.0.1:6379");
    assert.equal(set.pendingRequestsPerCredential, 5);
    assert.equal(set.revocationRetryMs, 2000);
  });
  for (const value of ["10", "10/1d", "0/1m", "10/0s", "x/1m"]) {
    it(`RATE_LIMIT_MCP_PER_CLIENT=${value} throws naming it`, () =>
      expectConfigError({ RATE_LIMIT_MCP_PER_CLIENT: value }, "RATE_LIMIT_MCP_PER_CLIENT"));
  }
  for (const value of ["0", "129", "48.5", "/64", "sixty-four"]) {
    it(`RATE_LIMIT_IPV6_PREFIX=${value} throws naming it and what it must be`, () => {
      expectConfigError({ RATE_LIMIT_IPV6_PREFIX: value }, "RATE_LIMIT_IPV6_PREFIX");
      assert.throws(() => parseConfig({ DATA_DIR: tempDir(), RATE_LIMIT_IPV6_PREFIX: value }), /whole number from 1 to 128/);
    });
  }
  it("RATE_LIMIT_CLIENT_METADATA_PER_HOST=30 throws naming it", () =>
    expectConfigError({ RATE_LIMIT_CLIENT_METADATA_PER_HOST: "30" }, "RATE_LIMIT_CLIENT_METADATA_PER_HOST"));
  it("REDIS_URL that is not redis:// throws naming it", () => expectConfigError({ REDIS_URL: "http://127.0.0.1:6379" }, "REDIS_URL"));
  it("reads TRUSTED_PROXIES as addresses, CIDRs and named ranges too, and refuses anything else naming it", () => {
    assert.deepEqual(parseConfig({ DATA_DIR: tempDir(), TRUSTED_PROXIES: "loopback, 10.1.2.3, fd00::/8" }).trustedProxies, [
      "127.0.0.0/8",
      "::1/128",
      "10.1.2.3/32",
      "fd00::/8",
    ]);
    for (const value of ["-1", "11", "localhost", "10.0.0.0/33", "1.2.3", "toString", "10.0.0.0/8/8", " , "])
      expectConfigError({ TRUSTED_PROXIES: value }, "TRUSTED_PROXIES");
  });

  it("reads the server's timeouts and connection cap in seconds, with defaults", () => {
    assert.deepEqual(parseConfig({ DATA_DIR: tempDir() }).http, {
      headersTimeoutMs: 15_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: 1000,
    });
    const set = parseConfig({
      DATA_DIR: tempDir(),
      HTTP_HEADERS_TIMEOUT_SECONDS: "5",
      HTTP_REQUEST_TIMEOUT_SECONDS: "20",
      HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: "65",
      HTTP_MAX_CONNECTIONS: "200",
    });
    assert.deepEqual(set.http, { headersTimeoutMs: 5_000, requestTimeoutMs: 20_000, keepAliveTimeoutMs: 65_000, maxConnections: 200 });
  });
  for (const [name, value] of [
    ["HTTP_HEADERS_TIMEOUT_SECONDS", "0"],
    ["HTTP_REQUEST_TIMEOUT_SECONDS", "1.5"],
    ["HTTP_KEEP_ALIVE_TIMEOUT_SECONDS", "soon"],
    ["HTTP_MAX_CONNECTIONS", "0"],
    ["ALLOWANCE_REVOCATION_RETRY_SECONDS", "0"],
  ]) {
    it(`${name}=${value} throws naming it`, () => expectConfigError({ [name]: value }, name));
  }
  it("a headers timeout longer than the request timeout throws naming it", () =>
    expectConfigError({ HTTP_HEADERS_TIMEOUT_SECONDS: "40", HTTP_REQUEST_TIMEOUT_SECONDS: "30" }, "HTTP_HEADERS_TIMEOUT_SECONDS"));
  it("PENDING_REQUESTS_PER_CREDENTIAL=0 throws naming it", () =>
    expectConfigError({ PENDING_REQUESTS_PER_CREDENTIAL: "0" }, "PENDING_REQUESTS_PER_CREDENTIAL"));

  it("reads CHAINS", () => {
    const chains = [{ id: 8453, name: "Base", rpcUrl: "https://mainnet.base.org", symbol: "ETH" }];
    assert.deepEqual(parseConfig({ DATA_DIR: tempDir(), CHAINS: JSON.stringify(chains) }).chains, chains);
  });

  describe("PRICE_FEEDS", () => {
    const FEED = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
    const TOKEN = "0x000000000000000000000000000000000000bEEF";

    it("reads feeds per chain, addresses lowercase; none by default, in USD, an hour old at most", () => {
      const settings = parseConfig({
        DATA_DIR: tempDir(),
        PRICE_FEEDS: JSON.stringify({ 31337: { native: FEED, tokens: { [TOKEN]: FEED } } }),
      });
      assert.deepEqual(settings.prices.feeds, {
        31337: { native: FEED.toLowerCase(), tokens: { [TOKEN.toLowerCase()]: FEED.toLowerCase() } },
      });
      assert.deepEqual(parseConfig({ DATA_DIR: tempDir() }).prices, { feeds: {}, currency: "USD", maxAgeSeconds: 3600 });
    });

    for (const [label, value] of [
      ["a chain CHAINS does not configure", { 1: { native: FEED } }],
      ["an aggregator that is no address", { 31337: { native: "0x1234" } }],
      ["an unknown key", { 31337: { native: FEED, feeds: {} } }],
    ] as const) {
      it(`refuses ${label}, naming PRICE_FEEDS`, () => expectConfigError({ PRICE_FEEDS: JSON.stringify(value) }, "PRICE_FEEDS"));
    }

    it("refuses a currency that is no ISO 4217 code, naming PRICE_CURRENCY", () =>
      expectConfigError({ PRICE_CURRENCY: "dollars" }, "PRICE_CURRENCY"));
  });

  describe("JWT_SIGNING_KEYS", () => {
    it("reads kid:secret pairs; the first signs, all verify; env secrets win over generated ones", () => {
      const dir = tempDir();
      const settings = parseConfig({
        DATA_DIR: dir,
        JWT_SIGNING_KEYS: `new:${KEY}, old:${"B".repeat(50)}`,
        SESSION_SECRET: "s".repeat(32),
      });
      assert.deepEqual(settings.jwtKeys, [
        { kid: "new", secret: KEY },
        { kid: "old", secret: "B".repeat(50) },
      ]);
      assert.equal(settings.sessionSecret, "s".repeat(32));
      assert.equal(fs.existsSync(path.join(dir, "secrets.json")), false, "nothing generated when both are set");
    });

    it("takes a secret in standard base64 (openssl rand -base64 32), read as base64url", () => {
      const bytes = Buffer.from("fb".repeat(8) + "ff".repeat(24), "hex");
      const settings = parseConfig({
        DATA_DIR: tempDir(),
        JWT_SIGNING_KEYS: `k1:${bytes.toString("base64")}`,
        SESSION_SECRET: "s".repeat(32),
      });
      assert.deepEqual(settings.jwtKeys, [{ kid: "k1", secret: bytes.toString("base64url") }]);
    });

    for (const [label, value] of [
      ["no kid", KEY],
      ["a short secret", `k1:${"A".repeat(42)}`],
      ["a secret in neither base64 alphabet", `k1:${"A".repeat(42)}*`],
      ["a secret mixing both alphabets", `k1:${"A".repeat(42)}+_`],
      ["an empty value", " , "],
      ["a kid with a colon", `a:b:${KEY}`],
    ] as const) {
      it(`refuses ${label}, naming JWT_SIGNING_KEYS`, () => expectConfigError({ JWT_SIGNING_KEYS: value }, "JWT_SIGNING_KEYS"));
    }
  });
});
