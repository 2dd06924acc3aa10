// agent-wallet: the CLI over the typed SDK. Every command speaks only the public surface (discovery,
// registration, device authorization, token, revocation, /mcp). This file parses the command line and answers
// --help from it alone; cli/run.ts, loaded only then, runs the command's module and maps errors to exit codes.
import { commandHelp, mainHelp, parseCommandLine, type ParsedCommandLine, type UsageError } from "./args";
import type { Io } from "./commands/shared";
import { EXIT } from "./exit-codes";

export async function main(argv: string[], io: Io, signal: AbortSignal = new AbortController().signal): Promise<number> {
  let parsed: ParsedCommandLine;
  try {
    parsed = parseCommandLine(argv);
  } catch (error) {
    const usage = error as UsageError;
    io.stderr.write(
      `agent-wallet: ${usage.message}\nRun \`agent-wallet ${usage.command ? `${usage.command.name} ` : ""}--help\` for usage.\n`,
    );
    return EXIT.usage;
  }
  if (parsed.help || !parsed.command) {
    io.stdout(parsed.command ? commandHelp(parsed.command) : mainHelp());
    return EXIT.ok;
  }
  const { runCommand } = await import("./run");
  return runCommand({ ...parsed, command: parsed.command }, io, signal);
}
