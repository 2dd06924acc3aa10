// The command line: commands, their options, and help text. Parsing uses only
// node:util parseArgs. Global options may come before or after the command.
import { parseArgs } from "node:util";
import { API_KEY_PREFIX } from "../contract/api-key";
import { EXIT_CODES } from "./exit-codes";

export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: CommandSpec,
  ) {
    super(message);
  }
}

export type OptionSpec = { type: "string" | "boolean"; short?: string; value?: string; description: string };
export type CommandSpec = {
  name: string;
  args: readonly string[]; // "<credential>" required, "[x]" optional
  summary: string;
  details?: string;
  options: Record<string, OptionSpec>;
};

const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  "base-url": {
    type: "string",
    value: "url",
    description: "The service (default: the one you logged in to, else $AGENT_WALLET_URL, else http://localhost:3000)",
  },
  "api-key": {
    type: "string",
    value: `${API_KEY_PREFIX}…`,
    description: "Use a personal API key instead of the login; `-` reads it from stdin (better: $AGENT_WALLET_API_KEY)",
  },
  json: { type: "boolean", description: "Machine-readable JSON on stdout" },
  help: { type: "boolean", short: "h", description: "Show help" },
};

/** For a command that may sign with the CLI's own key (request-allowance's): the enforcer it may trust. */
const OWN_KEY_OPTIONS: Record<string, OptionSpec> = {
  "exact-execution-enforcer": {
    type: "string",
    value: "address",
    description: "The ExactExecutionEnforcer to trust when this CLI's key signs (a chain with no published framework)",
  },
};

const WAIT_OPTIONS: Record<string, OptionSpec> = {
  wait: { type: "string", value: "seconds", description: "Wait this long for the person's approval (default 600)" },
  "no-wait": { type: "boolean", description: "Return at once with the request id and the approval URL" },
};

export const DEFAULT_WAIT_SECONDS = 600;

const IDEMPOTENCY_OPTIONS: Record<string, OptionSpec> = {
  "idempotency-key": {
    type: "string",
    value: "key",
    description:
      "Makes running it again safe: the same key and arguments get the first run's request or payment, never a second " +
      "(default: a new key each run)",
  },
};

// `as const`: the command names become a type, so cli/main.ts must have a module for every command.
export const COMMANDS = [
  {
    name: "login",
    args: [],
    summary: "Sign in with a code on any device (OAuth device authorization) and store the session",
    details:
      "Shows a short code, the address to enter it at and a QR code of that address (this computer's browser opens\n" +
      "at it too). Sign in there, on any device, and approve with your passkey: the terminal goes on by itself. The\n" +
      'CLI registers once per service as "Agent Wallet CLI" and reuses that registration. The tokens are stored in\n' +
      "your config folder ($AGENT_WALLET_CONFIG_DIR, else $XDG_CONFIG_HOME/agent-wallet, else ~/.config/agent-wallet),\n" +
      "readable only by you (mode 0600), with the key made at login that they are bound to (DPoP).",
    options: {
      "no-browser": { type: "boolean", description: "Do not open a browser; only show the code, the address and the QR code" },
    },
  },
  { name: "logout", args: [], summary: "Forget the stored session", options: {} },
  {
    name: "status",
    args: [],
    summary: "Show the connection, each credential's mode and limits, and the pending requests",
    options: {},
  },
  { name: "whoami", args: [], summary: "Show the service, how you are signed in, and what you were granted", options: {} },
  { name: "credentials", args: [], summary: "List the credentials granted to this client", options: {} },
  {
    name: "balance",
    args: ["<credential>"],
    summary: "Balance of a credential (id, name or address) on a chain: the coin, the chain's known tokens and those its limits name",
    options: {
      chain: { type: "string", value: "id", description: "Chain id, e.g. 31337 (default: the service's only chain)" },
      tokens: {
        type: "string",
        value: "addresses",
        description: "ERC-20 contracts to show, separated by commas (default: the chain's known tokens and those your limits cap)",
      },
    },
  },
  {
    name: "sign-message",
    args: ["<credential>", "<message>"],
    summary: "Ask for an EIP-191 signature of a message; waits for your approval",
    options: { ...WAIT_OPTIONS, ...IDEMPOTENCY_OPTIONS },
  },
  {
    name: "sign-typed-data",
    args: ["<credential>", "<json-file|->"],
    summary: "Ask for an EIP-712 signature of typed data read from a file or stdin (-)",
    options: { ...WAIT_OPTIONS, ...IDEMPOTENCY_OPTIONS },
  },
  {
    name: "send",
    args: ["<credential>"],
    summary: "Ask to sign and broadcast a transaction; waits for your approval",
    details:
      "From an allowance this CLI's own key spends (request-allowance), the key signs the payment and Agent Wallet's\n" +
      "relayer sends it and pays its gas, with no approval: on a chain without the Delegation Framework's published\n" +
      "deployment (a local chain), give the ExactExecutionEnforcer you trust with --exact-execution-enforcer.",
    options: {
      chain: { type: "string", value: "id", description: "Chain id; may be left out when the wallet can use only one" },
      to: { type: "string", value: "address", description: "Recipient (required)" },
      value: { type: "string", value: "amount", description: "Wei (e.g. 1000) or with a unit (e.g. 0.01eth, 20gwei); required" },
      data: { type: "string", value: "hex", description: "Call data, 0x-prefixed" },
      ...OWN_KEY_OPTIONS,
      ...WAIT_OPTIONS,
      ...IDEMPOTENCY_OPTIONS,
    },
  },
  {
    name: "pay",
    args: ["<credential>", "<url>"],
    summary: "Fetch a URL and pay its x402 402 within the credential's allowance (no tap); prints the body",
    details:
      "The credential must be granted in allowance mode with an allowance covering the token and the payee. What was\n" +
      "paid, to whom, is written to stderr; with --json, the status, the payment and the body on stdout. Only a\n" +
      "requirement for the URL given (same origin and path; the query is not compared) and at most --max is paid:\n" +
      "anything else is refused before anything is signed (exit code 6). From an allowance this CLI's own key spends\n" +
      "(request-allowance, any payee), a stock merchant's eip3009 offer is funded to the key and signed by it.",
    options: {
      ...OWN_KEY_OPTIONS,
      max: {
        type: "string",
        value: "amount token",
        description:
          'The most one payment may ask, in whole tokens: "0.50 USDC" (a symbol or a token address; several: ' +
          '"0.50 USDC,1 EURC"). Default: 0.10 of any token',
      },
      ...IDEMPOTENCY_OPTIONS,
    },
  },
  {
    name: "request-allowance",
    args: ["<credential>"],
    summary: "Ask for an allowance that a key this CLI keeps spends; waits for your approval",
    details:
      "The key is made on first use and kept in agent-key.json in your config folder, readable only by you (mode\n" +
      "0600); Agent Wallet never sees it, and holds no key that can spend the allowance. Once approved, the signed\n" +
      "delegations are printed (--json: the request, its `permission` the ERC-7715 granted permissions).",
    options: {
      chain: { type: "string", value: "id", description: "Chain id; may be left out when the wallet can use only one" },
      amount: {
        type: "string",
        value: "amount asset",
        description: 'Per period, in whole units: "5 USDC" (a symbol or a token address), "0.01 eth"; several: "5 USDC,0.01 eth"',
      },
      per: { type: "string", value: "period", description: "hour, day (default) or week: when the amounts are whole again" },
      to: { type: "string", value: "addresses", description: "Who may be paid, separated by commas (or --any-payee)" },
      "any-payee": { type: "boolean", description: "Tokens only: anyone may be paid, each payment at most --max-per-payment" },
      "max-per-payment": { type: "string", value: "amount token", description: 'With --any-payee, for each token: "0.50 USDC"' },
      payments: { type: "string", value: "n", description: "How many payments in all (required)" },
      days: { type: "string", value: "n", description: "Days until it ends, 1 to 30 (default 7)" },
      why: { type: "string", value: "text", description: "Why you ask, in words the person reads (required)" },
      ...WAIT_OPTIONS,
      ...IDEMPOTENCY_OPTIONS,
    },
  },
  { name: "request get", args: ["<id>"], summary: "Show a request", options: {} },
  {
    name: "request wait",
    args: ["<id>"],
    summary: "Wait until a request is completed, rejected, expired, cancelled or failed",
    options: { timeout: { type: "string", value: "seconds", description: "Give up after this long (default 600)" } },
  },
  { name: "request cancel", args: ["<id>"], summary: "Cancel a pending request", options: {} },
  {
    name: "requests",
    args: [],
    summary: "List this client's recent requests",
    options: {
      status: { type: "string", value: "status", description: "Only this status (pending, completed, rejected, …)" },
      limit: { type: "string", value: "n", description: "At most this many (default 20, at most 100)" },
    },
  },
] as const satisfies readonly CommandSpec[];

export type Command = (typeof COMMANDS)[number];

export type ParsedCommandLine = {
  command?: Command;
  positionals: string[];
  values: Record<string, string | boolean | undefined>;
  help: boolean;
};

function parseOptions(options: Record<string, OptionSpec>) {
  return Object.fromEntries(
    Object.entries(options).map(([name, spec]) => [name, spec.short ? { type: spec.type, short: spec.short } : { type: spec.type }]),
  );
}

const ALL_OPTIONS = Object.assign({}, GLOBAL_OPTIONS, ...COMMANDS.map((command) => command.options)) as Record<string, OptionSpec>;

function findCommand(words: string[]): { command?: Command; used: number } {
  if (words[0] === "request" && words[1]) {
    const command = COMMANDS.find((entry) => entry.name === `request ${words[1]}`);
    if (command) return { command, used: 2 };
  }
  const command = COMMANDS.find((entry) => entry.name === words[0]);
  return command ? { command, used: 1 } : { used: 0 };
}

export function parseCommandLine(argv: string[]): ParsedCommandLine {
  // First pass: find the command words, whatever options surround them.
  let loose;
  try {
    loose = parseArgs({ args: argv, options: parseOptions(ALL_OPTIONS), strict: false, allowPositionals: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const help = loose.values.help === true;
  if (!loose.positionals.length) {
    if (help) return { positionals: [], values: {}, help: true };
    throw new UsageError("No command given");
  }
  const { command, used } = findCommand(loose.positionals);
  if (!command) {
    if (loose.positionals[0] === "help") {
      const target = findCommand(loose.positionals.slice(1)).command;
      return { command: target, positionals: [], values: {}, help: true };
    }
    const [first, second = ""] = loose.positionals;
    const word = first === "request" ? `request ${second}`.trim() : first;
    const guess = didYouMean(
      word,
      COMMANDS.map((entry) => entry.name),
    );
    throw new UsageError(`Unknown command: ${word}${guess ? `. Did you mean \`${guess}\`?` : ""}`);
  }
  if (help) return { command, positionals: [], values: {}, help: true };

  // Second pass: only this command's options (and the global ones) are allowed.
  let strict;
  try {
    const options = parseOptions({ ...GLOBAL_OPTIONS, ...command.options });
    strict = parseArgs({ args: argv, options, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\. To specify a positional argument.*$/s, ""), command);
  }
  // Drop the command words (the first `used` positionals) and keep the rest in order.
  const positionals = strict.positionals.slice(used);
  const required = command.args.filter((arg) => arg.startsWith("<")).length;
  if (positionals.length < required) throw new UsageError(`Missing ${command.args.slice(positionals.length).join(" ")}`, command);
  if (positionals.length > command.args.length) throw new UsageError(`Unexpected argument: ${positionals[command.args.length]}`, command);
  return { command, positionals, values: strict.values as Record<string, string | boolean | undefined>, help: false };
}

/** A whole number of seconds from an option, or a UsageError naming it. */
export function secondsOption(values: ParsedCommandLine["values"], name: string, fallback: number, command?: CommandSpec): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  if (typeof raw !== "string" || !/^\d+$/.test(raw)) throw new UsageError(`--${name} must be a whole number of seconds`, command);
  return Number(raw);
}

function optionLines(options: Record<string, OptionSpec>): string[] {
  const rows = Object.entries(options).map(([name, spec]) => [
    `${spec.short ? `-${spec.short}, ` : "    "}--${name}${spec.value ? ` <${spec.value}>` : ""}`,
    spec.description,
  ]);
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
}

function exitCodeLines(): string[] {
  return EXIT_CODES.map(({ code, meaning }) => `  ${code}  ${meaning}`);
}

export function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((command) => `${command.name} ${command.args.join(" ")}`.length));
  return [
    "agent-wallet: your Agent Wallet from the terminal.",
    "",
    "Usage: agent-wallet <command> [options]",
    "",
    "Commands:",
    ...COMMANDS.map((command) => `  ${`${command.name} ${command.args.join(" ")}`.padEnd(width)}  ${command.summary}`),
    "",
    "Global options:",
    ...optionLines(GLOBAL_OPTIONS),
    "",
    "Sensitive commands (sign-message, sign-typed-data, send) wait for your passkey approval in the app,",
    "showing the approval URL; --no-wait returns at once with the request id.",
    "",
    "Exit codes:",
    ...exitCodeLines(),
    "",
    "Run `agent-wallet <command> --help` for a command's options.",
  ].join("\n");
}

export function commandHelp(command: CommandSpec): string {
  return [
    `Usage: agent-wallet ${command.name}${command.args.length ? ` ${command.args.join(" ")}` : ""} [options]`,
    "",
    command.summary + ".",
    ...(command.details ? ["", command.details] : []),
    ...(Object.keys(command.options).length ? ["", "Options:", ...optionLines(command.options)] : []),
    "",
    "Global options:",
    ...optionLines(GLOBAL_OPTIONS),
    "",
    "Exit codes:",
    ...exitCodeLines(),
  ].join("\n");
}

/** Edits (insert, delete, substitute, swap two neighbours) between two words, ignoring case. */
function distance(a: string, b: string): number {
  const [x, y] = [[...a.toLowerCase()], [...b.toLowerCase()]];
  const d = Array.from({ length: x.length + 1 }, (_, i) => Array.from({ length: y.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[x.length][y.length];
}

/** The candidate closest to a mistyped word, if one is close enough to be what was meant (or starts with it). */
export function didYouMean(word: string, candidates: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  let best: { candidate: string; score: number } | undefined;
  for (const candidate of candidates) {
    const score = candidate.toLowerCase().startsWith(lower) && lower.length >= 3 ? 0.5 : distance(word, candidate);
    if (score <= Math.max(1, Math.floor(candidate.length / 3)) && (!best || score < best.score)) best = { candidate, score };
  }
  return best?.candidate;
}
