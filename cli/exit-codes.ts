// The CLI's exit codes, defined once: `--help` prints this table and cli/README.md copies it
// (cli-unit.test.ts fails when the two differ). Scripts branch on these numbers: never renumber.
export const EXIT_CODES = [
  { code: 0, name: "ok", meaning: "success (also: `--no-wait` returned a pending request)" },
  {
    code: 1,
    name: "usage",
    meaning: "usage error: unknown command or option, missing or malformed argument or amount. See `agent-wallet <command> --help`",
  },
  {
    code: 2,
    name: "auth",
    meaning:
      "not signed in, or authentication failed: session expired and could not be refreshed, client or key revoked, login denied. " +
      "Run `agent-wallet login`, or issue a new API key on the Clients screen",
  },
  {
    code: 3,
    name: "request",
    meaning:
      "the request did not complete: rejected, expired, cancelled or failed, or still pending when the wait " +
      "(`--wait`, `request wait --timeout`) ran out (the request is printed on stdout, and stderr says which). " +
      "Approve it and run `agent-wallet request wait <id>`, or ask again",
  },
  {
    code: 4,
    name: "tool",
    meaning:
      "the tool refused (e.g. a `read` credential asked to sign, a credential not in the grant, " +
      "`request cancel` of a request that is no longer pending). `agent-wallet status` shows your grant, limits and requests",
  },
  { code: 5, name: "network", meaning: "network or server error. Check `--base-url` and your connection, then try again" },
  {
    code: 6,
    name: "refused",
    meaning:
      "`pay` refused the resource's x402 requirement before anything was signed: it asks more than `--max` (default 0.10 " +
      "of any token), is in a token `--max` names no most for, or is for another URL than the one given. Nothing was paid",
  },
  {
    code: 130,
    name: "interrupted",
    meaning: "interrupted (Ctrl-C); a request already created stays pending: `agent-wallet request wait <id>` resumes",
  },
] as const;

type ExitName = (typeof EXIT_CODES)[number]["name"];

/** The codes by name, for the code that returns them: EXIT.usage rather than a bare 1. */
export const EXIT = Object.fromEntries(EXIT_CODES.map(({ name, code }) => [name, code])) as Record<ExitName, number>;
