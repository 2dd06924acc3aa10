// `npm start` exactly as the README documents it, in the background and in its own process group, with what it prints.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";

export type NpmStart = {
  output: () => string;
  /** Resolves with everything printed so far once a line matches `pattern`; fails if npm start exits first. */
  waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<string>;
  /** Ctrl-C in its terminal: SIGINT to its whole process group; resolves once npm has exited. */
  interrupt: () => Promise<void>;
  /** Everything it started, at once. */
  kill: () => void;
};

/** `env` beside this process's environment; a variable set to undefined is left unset. */
export function npmStart(env: Record<string, string | undefined>): NpmStart {
  const merged: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const [name, value] of Object.entries(merged)) if (value === undefined) delete merged[name];
  const child = spawn("npm", ["start"], { env: merged, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    output: () => output,
    waitFor: async (pattern, timeoutMs = 150_000) => {
      for (const deadline = Date.now() + timeoutMs; !pattern.test(output); await new Promise((resolve) => setTimeout(resolve, 100))) {
        if (child.exitCode !== null || Date.now() > deadline) assert.fail(`no line matching ${pattern}:\n${output}`);
      }
      return output;
    },
    interrupt: async () => {
      process.kill(-child.pid!, "SIGINT");
      await exited;
    },
    kill: () => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    },
  };
}
