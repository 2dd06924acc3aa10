// Runs the `agent-wallet` bin as a child process, as a person or a script does.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { chooseGrant, type Grant } from "./consent";

const CLI_ENTRY = path.resolve("cli/agent-wallet.mjs");

export type CliResult = { code: number | null; stdout: string; stderr: string };

/** A fresh config folder, and an environment with no inherited Agent Wallet settings. */
export function cliEnv(extra: Record<string, string> = {}): { env: NodeJS.ProcessEnv; configDir: string } {
  const configDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "aw-cli-")), "agent-wallet");
  const env: NodeJS.ProcessEnv = { ...process.env, AGENT_WALLET_CONFIG_DIR: configDir, ...extra };
  delete env.AGENT_WALLET_API_KEY;
  delete env.AGENT_WALLET_URL;
  Object.assign(env, extra);
  return { env, configDir };
}

export function startCli(
  args: string[],
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; result: Promise<CliResult>; stdout: () => string; stderr: () => string } {
  return collected(spawn(process.execPath, [CLI_ENTRY, ...args], { env, stdio: ["pipe", "pipe", "pipe"] }));
}

/** A started CLI child with its output gathered as it comes. */
function collected(child: ChildProcess): ReturnType<typeof startCli> {
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk) => (stdout += chunk));
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const result = new Promise<CliResult>((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
  return { child, result, stdout: () => stdout, stderr: () => stderr };
}

export async function runCli(args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<CliResult> {
  const run = startCli(args, env);
  run.child.stdin!.end(input ?? "");
  return run.result;
}

/** Waits until the child's stdout (or stderr) matches, and returns the match. */
export async function waitForOutput(
  run: ReturnType<typeof startCli>,
  pattern: RegExp,
  timeoutMs = 30_000,
  stream: "stdout" | "stderr" = "stdout",
): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  const text = () => (stream === "stdout" ? run.stdout() : run.stderr());
  for (;;) {
    const match = text().match(pattern);
    if (match) return match;
    if (run.child.exitCode !== null)
      throw new Error(`the CLI exited (${run.child.exitCode}) before printing ${pattern} on ${stream}: ${run.stdout()}\n${run.stderr()}`);
    if (Date.now() > deadline) throw new Error(`the CLI did not print ${pattern} on ${stream} within ${timeoutMs} ms: ${text()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The CLI in a pseudo-terminal of `columns` columns (util-linux `script`), as a person at a terminal runs it:
 * stdout and stderr are a TTY, and writing "\x03" is a Ctrl-C (the terminal sends SIGINT). What the terminal shows
 * comes back on `stdout()`, with "\r\n" line ends and the spinner's control sequences.
 */
export function startCliInTerminal(args: string[], env: NodeJS.ProcessEnv, columns = 80): ReturnType<typeof startCli> {
  const quoted = [process.execPath, CLI_ENTRY, ...args].map((word) => `'${word.replace(/'/g, "'\\''")}'`).join(" ");
  return collected(
    spawn("script", ["-qfec", `stty cols ${columns} rows 40; exec ${quoted}`, "/dev/null"], {
      env: { ...env, TERM: "xterm" },
      stdio: ["pipe", "pipe", "pipe"],
    }),
  );
}

/** What `agent-wallet login` shows: the user code, then the address to enter it at on a line of its own. */
export const DEVICE_PROMPT = /enter the code ([BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}):\r?\n\r?\n(http:\/\/\S+\/device)\r?\n/;

/** What a sensitive command's wait shows on stderr (not a terminal): the approval URL on its own line, then the wait. */
export const WAITING = /Approve it at:\n(?=http:\/\/\S+\/approvals\/(rq_\S+)\n)(http:\/\/\S+)\nWaiting for your approval of request rq_/;

/**
 * The person's side of `agent-wallet login` on a signed-in page: the code typed at the address the CLI showed,
 * then the consent screen, approved with the passkey (or denied); the page then says to return to the device.
 */
export async function approveDevice(
  page: Page,
  verificationUri: string,
  userCode: string,
  grants: Grant[],
  decision: "approve" | "deny" = "approve",
): Promise<void> {
  await page.goto(verificationUri);
  await page.getByLabel("Code").fill(userCode);
  await page.getByRole("button", { name: "Continue" }).click();
  await page.waitForURL(/\/consent\?request=/);
  if (decision === "deny") {
    await page.getByRole("button", { name: "Deny" }).click();
    await page.getByRole("heading", { name: "Device not connected" }).waitFor();
    return;
  }
  for (const grant of grants) await chooseGrant(page, grant);
  await page.getByRole("button", { name: "Approve with passkey" }).click();
  await page.getByRole("heading", { name: "Device connected" }).waitFor();
}

/** `agent-wallet login --no-browser` as a child process, approved by the person on `page`; returns the CLI's result. */
export async function cliLogin(baseUrl: string, page: Page, env: NodeJS.ProcessEnv, grants: Grant[]): Promise<CliResult> {
  const run = startCli(["login", "--no-browser", "--base-url", baseUrl], env);
  try {
    const [, userCode, verificationUri] = await waitForOutput(run, DEVICE_PROMPT);
    await approveDevice(page, verificationUri, userCode, grants);
    return await run.result;
  } finally {
    if (run.child.exitCode === null) run.child.kill();
  }
}

/**
 * A personal API key (as the Clients screen makes it: only its hash stored) granted the person's existing credential in
 * `approve` mode: the key, for the CLI's AGENT_WALLET_API_KEY.
 */
export async function apiKeyForCredential(credentialId: string, name: string): Promise<string> {
  const { db } = await import("@/lib/db");
  const { randomBase62, randomId, sha256Hex } = await import("@/lib/crypto");
  const { createGrant } = await import("@/lib/oauth/grants");
  const key = `svc_live_${randomBase62(43)}`;
  const clientId = randomId("k_");
  const { userId } = await db().credential.findUniqueOrThrow({ where: { id: credentialId } });
  await db().$transaction(async (tx) => {
    await tx.client.create({ data: { id: clientId, kind: "api_key", name, userId, keyHash: sha256Hex(key), keyHint: key.slice(-4) } });
    await createGrant(tx, {
      userId,
      clientId,
      scope: "mcp",
      credentials: [{ credentialId, mode: "approve", policy: {} }],
      now: new Date(),
    });
  });
  return key;
}
