// Runs the `agent-wallet` bin as a child process, as a person or a script does.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

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
  const child = spawn(process.execPath, [CLI_ENTRY, ...args], { env, stdio: ["pipe", "pipe", "pipe"] });
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
