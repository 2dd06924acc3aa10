// Unit tests of the CLI's pure parts: argument parsing, amounts, tables, the
// stored session's file modes, the exit codes (help and cli/README.md).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AmountError, parseAmount } from "./amount";
import { formatUnits, readableUnits } from "../sdk";
import { COMMANDS, commandHelp, didYouMean, mainHelp, parseCommandLine, secondsOption, UsageError } from "./args";
import {
  configDir,
  configFile,
  deleteSession,
  forgetRegisteredClient,
  loadRegisteredClient,
  loadSession,
  saveRegisteredClient,
  saveSession,
  withSessionLock,
} from "./config";
import { fitWidth } from "./spinner";
import { clean, keyValues, policySummary, relativeTime, table } from "./format";
import { EXIT, EXIT_CODES } from "./exit-codes";
import { describeError } from "./run";
import { maxOption } from "./commands/pay";
import { CliToolError, InterruptedError, RequestNotCompletedError } from "./commands/shared";
import { LoginError } from "./login";
import {
  AuthenticationError,
  InvalidInputError,
  NetworkError,
  OAuthError,
  PaymentRefusedError,
  ServerError,
  SignInRequiredError,
  ToolError,
  type PolicyView,
  type RequestView,
} from "../sdk";

describe("amounts", () => {
  it("a plain integer is wei; a unit converts exactly", () => {
    assert.equal(parseAmount("1000"), "1000");
    assert.equal(parseAmount("0.01eth"), "10000000000000000");
    assert.equal(parseAmount("0.01 ETH"), "10000000000000000");
    assert.equal(parseAmount("1.5ether"), "1500000000000000000");
    assert.equal(parseAmount("20gwei"), "20000000000");
    assert.equal(parseAmount("0.000000000000000001eth"), "1");
    assert.equal(parseAmount(".5eth"), "500000000000000000");
    assert.equal(parseAmount("1.eth"), "1000000000000000000");
    assert.equal(parseAmount("7wei"), "7");
    assert.equal(parseAmount("1.10000eth"), "1100000000000000000", "trailing zeros beyond the precision are fine");
  });
  it("refuses what is not an exact amount", () => {
    for (const bad of ["", "-1", "1e18", "0x10", "1.5", "0.0000000000000000001eth", "1 btc", "eth", "1,5eth", "1..2eth"]) {
      assert.throws(() => parseAmount(bad), AmountError, bad);
    }
    assert.throws(() => parseAmount("1" + "0".repeat(78)), AmountError);
  });
  it("a bare number with a fraction is answered with the unit it most likely meant", () => {
    assert.throws(() => parseAmount("0.01"), {
      name: "Error",
      message: '"0.01" has no unit, and a bare number is wei: did you mean 0.01eth?',
    });
    assert.throws(() => parseAmount(" .5 "), /did you mean \.5eth\?$/);
    assert.equal(parseAmount("2.000"), "2", "no fraction, no doubt: wei");
  });
  it("formats wei back to whole units", () => {
    assert.equal(formatUnits("10000000000000000"), "0.01");
    assert.equal(formatUnits("1500000000000000000"), "1.5");
    assert.equal(formatUnits("0"), "0");
    assert.equal(formatUnits(2n * 10n ** 18n), "2");
  });
  it("shows amounts with the digits a person reads: 4 decimals, or 4 significant ones below 1, a most rounded up", () => {
    assert.equal(readableUnits("0.999979123456789012"), "0.9999");
    assert.equal(readableUnits("1234.567891"), "1234.5678");
    assert.equal(readableUnits("0.000031500000147"), "0.0000315");
    assert.equal(readableUnits("0.000031500000147", true), "0.00003151");
    assert.equal(readableUnits("9.99999", true), "10");
    assert.equal(readableUnits("0.01"), "0.01");
    assert.equal(readableUnits("1.5"), "1.5");
    assert.equal(readableUnits("0"), "0");
    assert.equal(readableUnits("-2.123456"), "-2.1234");
  });
});

describe("the command line", () => {
  it("finds the command wherever the global options are", () => {
    const a = parseCommandLine(["--json", "--base-url", "http://x.test", "credentials"]);
    assert.equal(a.command?.name, "credentials");
    assert.equal(a.values.json, true);
    assert.equal(a.values["base-url"], "http://x.test");
    const b = parseCommandLine(["balance", "Main", "--chain", "31337", "--json"]);
    assert.equal(b.command?.name, "balance");
    assert.deepEqual(b.positionals, ["Main"]);
    assert.equal(b.values.chain, "31337");
  });
  it("two-word commands, and their arguments", () => {
    const wait = parseCommandLine(["request", "wait", "req_1", "--timeout", "5"]);
    assert.equal(wait.command?.name, "request wait");
    assert.deepEqual(wait.positionals, ["req_1"]);
    assert.equal(secondsOption(wait.values, "timeout", 600), 5);
    assert.equal(parseCommandLine(["request", "cancel", "req_2"]).command?.name, "request cancel");
    const sign = parseCommandLine(["sign-message", "Main", "hello world", "--no-wait"]);
    assert.deepEqual(sign.positionals, ["Main", "hello world"]);
    assert.equal(sign.values["no-wait"], true);
    assert.deepEqual(parseCommandLine(["sign-message", "Main", "--", "--not-an-option"]).positionals, ["Main", "--not-an-option"]);
    assert.deepEqual(parseCommandLine(["sign-typed-data", "Main", "-"]).positionals, ["Main", "-"]);
  });
  it("usage errors: unknown command, unknown option, missing or extra argument, an option of another command", () => {
    assert.throws(() => parseCommandLine([]), UsageError);
    assert.throws(() => parseCommandLine(["frobnicate"]), /Unknown command: frobnicate/);
    assert.throws(() => parseCommandLine(["request", "explode", "x"]), /Unknown command: request explode/);
    assert.throws(() => parseCommandLine(["credentials", "--frob"]), /Unknown option '--frob'/);
    assert.throws(() => parseCommandLine(["sign-message", "Main"]), /Missing <message>/);
    assert.throws(() => parseCommandLine(["credentials", "extra"]), /Unexpected argument: extra/);
    assert.throws(() => parseCommandLine(["credentials", "--chain", "1"]), /Unknown option '--chain'/);
    assert.throws(() => secondsOption({ wait: "soon" }, "wait", 600), /whole number of seconds/);
  });
  it("the commands that pay or ask for a signature take --idempotency-key; the others do not", () => {
    for (const argv of [
      ["send", "Main", "--to", "0x1", "--value", "1"],
      ["pay", "Main", "https://api.test/report"],
      ["sign-message", "Main", "hi"],
      ["sign-typed-data", "Main", "-"],
    ])
      assert.equal(parseCommandLine([...argv, "--idempotency-key", "order-42"]).values["idempotency-key"], "order-42");
    assert.throws(() => parseCommandLine(["balance", "Main", "--idempotency-key", "k"]), /Unknown option '--idempotency-key'/);
  });
  it("--help for the program and for every command, with the exit codes", () => {
    assert.equal(parseCommandLine(["--help"]).help, true);
    assert.equal(parseCommandLine(["send", "-h"]).command?.name, "send");
    assert.equal(parseCommandLine(["help", "request", "get"]).command?.name, "request get");
    for (const { code, meaning } of EXIT_CODES) {
      assert.ok(mainHelp().includes(`\n  ${code}  ${meaning}\n`), `help explains exit code ${code}`);
    }
    for (const command of COMMANDS) {
      const help = commandHelp(command);
      assert.match(help, new RegExp(`^Usage: agent-wallet ${command.name}`));
      for (const option of Object.keys(command.options)) assert.ok(help.includes(`--${option}`), `${command.name} documents --${option}`);
      assert.match(help, /Exit codes:/);
    }
  });
  it("cli/README.md's exit-code table is the one --help prints", () => {
    const readme = fs.readFileSync(new URL("./README.md", import.meta.url), "utf8");
    const section = readme.split(/^## /m).find((part) => part.startsWith("Exit codes\n"));
    assert.ok(section, "cli/README.md has a section ## Exit codes");
    // Cells without their padding, and no separator row, so a Prettier-aligned table reads the same.
    const lines = section.split("\n").filter((line) => line.startsWith("|"));
    const rows = lines.map((line) => line.split(/\s*\|\s*/).slice(1, -1)).filter((cells) => !cells.every((cell) => /^-+$/.test(cell)));
    const expected = [["Code", "Meaning"], ...EXIT_CODES.map(({ code, meaning }) => [String(code), meaning])];
    assert.deepEqual(rows, expected);
  });
  it("pay's --max: an amount and a token (a symbol or an address), several with commas", () => {
    assert.equal(maxOption(undefined), undefined, "left out: the SDK's default most");
    assert.deepEqual(maxOption("0.50 USDC"), { USDC: "0.50" });
    assert.deepEqual(maxOption("1EURC, .5 USDC"), { EURC: "1", USDC: ".5" });
    const address = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
    assert.deepEqual(maxOption(`2 ${address}`), { [address]: "2" });
    for (const bad of ["", "USDC", "0.50", "-1 USDC", "1e3 USDC", "0.5 US DC"])
      assert.throws(() => maxOption(bad), /--max takes an amount and a token/, bad);
  });
  it("errors map to the documented exit codes", () => {
    assert.equal(describeError(new UsageError("x")).code, EXIT.usage);
    assert.equal(describeError(new SignInRequiredError("x", "The client was revoked")).code, EXIT.auth);
    assert.match(describeError(new SignInRequiredError("x", "The client was revoked")).message, /revoked.*agent-wallet login/);
    assert.match(describeError(new SignInRequiredError("x", "The refresh token expired")).message, /expired and could not be renewed/);
    assert.equal(describeError(new AuthenticationError("x", "The API key is invalid")).code, EXIT.auth);
    assert.equal(describeError(new OAuthError("access_denied", "no")).code, EXIT.auth);
    assert.equal(describeError(new ToolError("sign_message", "read only")).code, EXIT.tool);
    assert.equal(describeError(new NetworkError("down")).code, EXIT.network);
    const over = describeError(new PaymentRefusedError("over_max", "Refused to pay https://a.test/r: it asks 2 USDC", null));
    assert.deepEqual(over, {
      code: EXIT.refused,
      message:
        "Refused to pay https://a.test/r: it asks 2 USDC. Nothing was signed. " +
        'Run again with --max naming the most you mean to pay (e.g. --max "0.50 USDC").',
    });
    assert.equal(describeError(new ServerError("500", 500)).code, EXIT.network);
    assert.equal(describeError(Object.assign(new Error("Interrupted"), { name: "AbortError" })).code, EXIT.interrupted);
    const stopped = describeError(new InterruptedError("Stopped waiting. To resume: agent-wallet request wait rq_1"));
    assert.deepEqual(stopped, { code: EXIT.interrupted, message: "Stopped waiting. To resume: agent-wallet request wait rq_1" });
  });
  it("every error message ends with the next step", () => {
    const pending: RequestView = {
      request_id: "rq_1",
      kind: "sign_message",
      status: "pending",
      credential_id: "cr_1",
      chain_id: null,
      approval_url: "https://app.example/approvals/rq_1",
      created_at: "2026-01-01T00:00:00.000Z",
      expires_at: "2026-01-01T00:10:00.000Z",
      signature: null,
      tx_hash: null,
      reason: null,
    };
    const messages = {
      revoked: describeError(new SignInRequiredError("x", "The client was revoked.")).message,
      expired: describeError(new SignInRequiredError("x")).message,
      badKey: describeError(new AuthenticationError("x", "The API key is invalid")).message,
      denied: describeError(new OAuthError("access_denied", "no")).message,
      loginFailed: describeError(new LoginError("No answer from the browser within 600 s")).message,
      stillPending: describeError(new RequestNotCompletedError(pending)).message,
      rejected: describeError(new RequestNotCompletedError({ ...pending, status: "rejected", reason: "Rejected by the user." })).message,
      refused: describeError(new ToolError("sign_message", "Credential Main is read-only in this grant")).message,
      noCredential: describeError(new CliToolError("No credential. Run `agent-wallet status` to see your grant.")).message,
      unreachable: describeError(new NetworkError("Could not reach http://127.0.0.1:9 (ECONNREFUSED)")).message,
      serverError: describeError(new ServerError("tools/call: the server answered HTTP 502", 502)).message,
      interrupted: describeError(Object.assign(new Error("Interrupted"), { name: "AbortError" })).message,
      unexpected: describeError(new TypeError("boom")).message,
    };
    assert.equal(
      messages.revoked,
      "This client's access was revoked (The client was revoked.). Run `agent-wallet login` to sign in again.",
    );
    assert.equal(messages.expired, "Your session has expired and could not be renewed. Run `agent-wallet login` to sign in again.");
    assert.equal(messages.denied, "Sign-in was denied on the consent screen. Run `agent-wallet login` to try again.");
    assert.equal(messages.loginFailed, "Sign-in failed: No answer from the browser within 600 s. Run `agent-wallet login` to try again.");
    assert.equal(
      messages.stillPending,
      "Request rq_1 is still pending. Approve it at https://app.example/approvals/rq_1, then run `agent-wallet request wait rq_1`.",
    );
    assert.equal(messages.rejected, "Request rq_1 was rejected: Rejected by the user. Run the command again to ask anew.");
    assert.equal(
      messages.refused,
      "Credential Main is read-only in this grant. Run `agent-wallet status` to see your grant, limits and requests.",
    );
    assert.match(
      messages.unreachable,
      /^Could not reach .*\. Check the URL \(--base-url or \$AGENT_WALLET_URL\) and your connection, then try again\.$/,
    );
    // Each one ends in an instruction (run, check, issue, approve, try).
    for (const [name, message] of Object.entries(messages)) {
      assert.match(message, /[.:] (run|check|issue|approve|try)\b[^]*\.$/i, `${name}: ${message}`);
      assert.doesNotMatch(message, /\.\./, `${name}: ${message}`);
    }
    assert.equal(describeError(new InvalidInputError("sign_message", "x")).code, EXIT.usage, "usage errors get `--help` from main");
  });
});

describe("status", () => {
  const view = (mode: "read" | "approve", policy: PolicyView["policy"], remaining: Partial<PolicyView["remaining"]> = {}): PolicyView => ({
    credential_id: "cr_1",
    mode,
    policy,
    remaining: {
      native_per_transaction: null,
      native_per_day: null,
      native_per_week: null,
      native_by_chain: [],
      tokens: [],
      requests_this_hour: null,
      ...remaining,
    },
  });
  const dayLeft = { limit: "200000000000000000", used: "50000000000000000", remaining: "150000000000000000", frees_at: null };
  const local = (caps: Pick<PolicyView["remaining"]["native_by_chain"][number], "per_day"> & { per_transaction?: string }) => ({
    chain_id: 31337,
    chain_name: "Local",
    symbol: "ETH",
    per_transaction: caps.per_transaction ?? null,
    per_week: null,
    per_day: caps.per_day,
  });
  it("a credential's mode and limits in a few words, with what is left of the rolling caps", () => {
    assert.equal(policySummary(view("read", {})), "read only: no signatures");
    assert.equal(policySummary(view("approve", {})), "no limits: you approve each request");
    assert.equal(
      policySummary(
        view(
          "approve",
          {
            native: { per_transaction: "50000000000000000", per_day: "200000000000000000" },
            recipients: ["0x000000000000000000000000000000000000bEEF"],
            sign_message: false,
            requests_per_hour: 10,
          },
          {
            native_per_day: dayLeft,
            native_by_chain: [local({ per_transaction: "50000000000000000", per_day: dayLeft })],
            requests_this_hour: { limit: 10, used: 1, remaining: 9 },
          },
        ),
      ),
      [
        "up to 0.05 ETH a transaction",
        "0.2 ETH a day (0.15 ETH left)",
        "only to 1 recipient",
        "no message signing",
        "10 requests an hour (9 left)",
      ].join(" · "),
    );
  });
  it("native caps in each chain's coin, token caps in the token's units with its symbol, unlimited approvals refused", () => {
    const token = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
    const cap = { chain_id: 31337, token, per_transaction: "5000000", per_day: "10000000" };
    const tokenDay = { limit: "10000000", used: "2500000", remaining: "7500000", frees_at: null };
    const policy = { native: { per_day: "200000000000000000" }, tokens: [cap], no_unlimited_approvals: true };
    const polygon = { ...local({ per_day: dayLeft }), chain_id: 137, chain_name: "Polygon", symbol: "POL" };
    assert.equal(
      policySummary(
        view("approve", policy, {
          native_per_day: dayLeft,
          native_by_chain: [polygon],
          tokens: [{ ...cap, per_day: tokenDay, symbol: "USDC", decimals: 6 }],
        }),
      ),
      "0.2 POL a day (0.15 POL left) · up to 5 USDC a transaction, 10 USDC a day (7.5 USDC left) · refuses unlimited approvals",
    );
    assert.equal(
      policySummary(view("approve", policy, { native_by_chain: [local({ per_day: null }), polygon], tokens: [{ ...cap, per_day: null }] })),
      "0.2 ETH on Local or 0.2 POL on Polygon a day · up to 5000000 base units of token 0x5FbD…0aa3 a transaction · " +
        "refuses unlimited approvals",
      "a server before the tokens' symbol and decimals: base units of the token",
    );
  });
  it("amounts in a few digits, never 16-18 of them: a cap never shown below itself, what is left never above", () => {
    const left = { limit: "1000000000000000001", used: "123456789012345", remaining: "999876543210987656", frees_at: null };
    const token = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
    const cap = { chain_id: 31337, token, per_transaction: "333333333333333333", per_day: "1000000000000000001" };
    const tokenDay = { limit: "1000000000000000001", used: "1", remaining: "1000000000000000000", frees_at: null };
    const summary = policySummary(
      view(
        "approve",
        { native: { per_day: "1000000000000000001" }, tokens: [cap] },
        {
          native_per_day: left,
          native_by_chain: [local({ per_day: left })],
          tokens: [{ ...cap, per_day: tokenDay, symbol: "WETH", decimals: 18 }],
        },
      ),
    );
    assert.equal(summary, "1.0001 ETH a day (0.9998 ETH left) · up to 0.3334 WETH a transaction, 1.0001 WETH a day (1 WETH left)");
    assert.doesNotMatch(summary, /\d{9}/);
  });
  it("a token's expiry relative to now", () => {
    const now = new Date("2026-01-01T12:00:00Z");
    assert.equal(relativeTime("2026-01-01T12:59:30Z", now), "in 60 min");
    assert.equal(relativeTime("2026-01-01T11:30:00Z", now), "30 min ago");
    assert.equal(relativeTime("2026-01-02T12:00:00Z", now), "in 24 h");
  });
});

describe("tables", () => {
  it("pads every column but the last to its widest cell", () => {
    const rows = [
      { name: "Main", mode: "approve" },
      { name: "Savings account", mode: "read" },
    ];
    assert.equal(
      table(rows, [
        { header: "NAME", value: (row) => row.name },
        { header: "MODE", value: (row) => row.mode },
      ]),
      ["NAME             MODE", "Main             approve", "Savings account  read"].join("\n"),
    );
  });
  it("key/value blocks skip empty values; control characters never reach the terminal", () => {
    assert.equal(
      keyValues([
        ["Status", "pending"],
        ["Signature", null],
        ["Chain", 31337],
      ]),
      "Status:  pending\nChain:   31337",
    );
    assert.equal(clean("a\u001b[31mred\u0007\nb"), "a?[31mred?\\nb");
  });
});

describe("the stored session", () => {
  it("lives in $AGENT_WALLET_CONFIG_DIR, else $XDG_CONFIG_HOME/agent-wallet, else ~/.config/agent-wallet", () => {
    assert.equal(configDir({ AGENT_WALLET_CONFIG_DIR: "/tmp/aw", XDG_CONFIG_HOME: "/x" }), "/tmp/aw");
    assert.equal(configDir({ XDG_CONFIG_HOME: "/x" }), "/x/agent-wallet");
    assert.equal(configDir({ HOME: os.homedir() }), path.join(os.homedir(), ".config", "agent-wallet"));
  });
  it("is written with mode 0600 in a 0700 folder, read back, and deleted", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "aw-cfg-"));
    const env = { AGENT_WALLET_CONFIG_DIR: path.join(root, "nested", "agent-wallet") };
    const session = {
      baseUrl: "http://localhost:3000",
      clientId: "c1",
      tokens: { accessToken: "a", tokenType: "Bearer", refreshToken: "r" },
      savedAt: "now",
    };
    saveSession(session, env);
    assert.equal(fs.statSync(configFile(env)).mode & 0o777, 0o600);
    assert.equal(fs.statSync(configDir(env)).mode & 0o777, 0o700);
    assert.deepEqual(loadSession(env), session);
    assert.equal(await withSessionLock(async () => 42, env), 42);
    assert.ok(!fs.existsSync(path.join(configDir(env), "session.lock")), "the lock is released");
    fs.writeFileSync(configFile(env), "{not json");
    assert.equal(loadSession(env), undefined, "a damaged file reads as signed out");
    assert.equal(deleteSession(env), true);
    assert.equal(deleteSession(env), false);
    fs.rmSync(root, { recursive: true, force: true });
  });
});

describe("the CLI's registration per service", () => {
  it("is remembered per base URL (0600), kept apart from the session, and forgotten on request", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "aw-clients-"));
    const env = { AGENT_WALLET_CONFIG_DIR: path.join(root, "agent-wallet") };
    assert.equal(loadRegisteredClient("http://a.test", env), undefined);
    saveRegisteredClient("http://a.test", "c_a", env);
    saveRegisteredClient("http://b.test", "c_b", env);
    assert.equal(loadRegisteredClient("http://a.test", env), "c_a");
    assert.equal(fs.statSync(path.join(configDir(env), "clients.json")).mode & 0o777, 0o600);
    deleteSession(env);
    assert.equal(loadRegisteredClient("http://a.test", env), "c_a", "logout keeps the registration");
    forgetRegisteredClient("http://a.test", env);
    assert.equal(loadRegisteredClient("http://a.test", env), undefined);
    assert.equal(loadRegisteredClient("http://b.test", env), "c_b");
    fs.rmSync(root, { recursive: true, force: true });
  });
});

describe("the spinner's line", () => {
  it("fits the terminal: cut with an ellipsis, whole characters", () => {
    assert.equal(fitWidth("⠋ Waiting", 20), "⠋ Waiting");
    assert.equal(fitWidth("⠋ Waiting for your approval (code BCDF-GHJK)", 20), "⠋ Waiting for your …");
    assert.equal([...fitWidth("⠋ Waiting for your approval (code BCDF-GHJK)", 20)].length, 20);
  });
});

describe("did you mean", () => {
  it("names the closest command or wallet for a typo, a swap or a prefix, and nothing for a stranger", () => {
    const names = COMMANDS.map((command) => command.name);
    assert.equal(didYouMean("statsu", names), "status");
    assert.equal(didYouMean("whomai", names), "whoami");
    assert.equal(didYouMean("request wiat", names), "request wait");
    assert.equal(didYouMean("bal", names), "balance");
    assert.equal(didYouMean("deploy", names), undefined);
    assert.equal(didYouMean("mian", ["Main", "Savings"]), "Main");
    assert.equal(didYouMean("Saving", ["Main", "Savings"]), "Savings");
    assert.equal(didYouMean("Other", ["Main", "Savings"]), undefined);
  });
  it("is part of the unknown command's message", () => {
    assert.throws(() => parseCommandLine(["logn"]), /Unknown command: logn\. Did you mean `login`\?/);
  });
});
