// Unit tests of the CLI's pure parts: argument parsing, amounts, tables, the
// stored session's file modes, the exit codes (help and cli/README.md).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AmountError, formatUnits, parseAmount } from "./amount";
import { COMMANDS, commandHelp, mainHelp, parseCommandLine, secondsOption, UsageError } from "./args";
import { configDir, configFile, deleteSession, loadSession, saveSession, withSessionLock } from "./config";
import { clean, keyValues, table } from "./format";
import { EXIT, EXIT_CODES } from "./exit-codes";
import { describeError } from "./main";
import { AuthenticationError, NetworkError, OAuthError, ServerError, SignInRequiredError, ToolError } from "../sdk";

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
  it("formats wei back to whole units", () => {
    assert.equal(formatUnits("10000000000000000"), "0.01");
    assert.equal(formatUnits("1500000000000000000"), "1.5");
    assert.equal(formatUnits("0"), "0");
    assert.equal(formatUnits(2n * 10n ** 18n), "2");
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
  it("errors map to the documented exit codes", () => {
    assert.equal(describeError(new UsageError("x")).code, EXIT.usage);
    assert.equal(describeError(new SignInRequiredError("x", "The client was revoked")).code, EXIT.auth);
    assert.match(describeError(new SignInRequiredError("x", "The client was revoked")).message, /revoked.*agent-wallet login/);
    assert.match(describeError(new SignInRequiredError("x", "The refresh token expired")).message, /expired and could not be renewed/);
    assert.equal(describeError(new AuthenticationError("x", "The API key is invalid")).code, EXIT.auth);
    assert.equal(describeError(new OAuthError("access_denied", "no")).code, EXIT.auth);
    assert.equal(describeError(new ToolError("sign_message", "read only")).code, EXIT.tool);
    assert.equal(describeError(new NetworkError("down")).code, EXIT.network);
    assert.equal(describeError(new ServerError("500", 500)).code, EXIT.network);
    assert.equal(describeError(Object.assign(new Error("Interrupted"), { name: "AbortError" })).code, EXIT.interrupted);
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
