// What the command modules share: the context a command runs in, printing (human or --json),
// finding the service and the client (login session or personal key), and waiting for a request.
import { randomUUID } from "node:crypto";
import { AgentWalletClient, API_KEY_PREFIX, FINAL_STATUSES, WaitTimeoutError, type RequestView } from "../../sdk";
import { DEFAULT_WAIT_SECONDS, didYouMean, secondsOption, UsageError, type Command, type ParsedCommandLine } from "../args";
import { getAddress, isAddressEqual, type Address } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { loadAgentKey, loadSession, saveSession, withSessionLock, type StoredSession } from "../config";
import { EXIT } from "../exit-codes";
import { requestDetails } from "../format";
import { readSecretLine } from "../secret-input";
import { Spinner } from "../spinner";

const DEFAULT_BASE_URL = "http://localhost:3000";
const CLIENT_INFO = { name: "agent-wallet-cli", version: "0.1.0" };

export const SIGN_IN_AGAIN = "Run `agent-wallet login` to sign in again.";

/** A message and the next step, as one text: "What happened. What to do." */
export function withNextStep(message: string, next: string): string {
  return `${message.replace(/[.\s]+$/, "")}. ${next}`;
}

/** Not signed in at all (no session, no key). */
export class NotSignedInError extends Error {}
/** A request ended in another state than completed (or is still pending when the wait ran out). */
export class RequestNotCompletedError extends Error {
  constructor(readonly request: RequestView) {
    const id = request.request_id;
    const state = request.status === "pending" ? "is still pending" : `was ${request.status}`;
    const next =
      request.status === "pending"
        ? `Approve it at ${request.approval_url}, then run \`agent-wallet request wait ${id}\`.`
        : "Run the command again to ask anew.";
    super(withNextStep(`Request ${id} ${state}${request.reason ? `: ${request.reason}` : ""}`, next));
  }
}
/** A tool-level refusal found by the CLI itself (e.g. no such credential in the grant). */
export class CliToolError extends Error {}
/** A resource the CLI fetches (not the wallet service) gave no answer: the message names its host and why. */
export class ResourceUnreachableError extends Error {}
/** Ctrl-C while a request exists or may exist: the message is the one safe next step (never "ask again"). */
export class InterruptedError extends Error {}

export type Io = {
  stdout: (text: string) => void;
  stderr: NodeJS.WriteStream;
  stdin: NodeJS.ReadStream;
  env: NodeJS.ProcessEnv;
};

export type Context = {
  parsed: ParsedCommandLine;
  command: Command;
  json: boolean;
  io: Io;
  signal: AbortSignal;
};

/** A command: runs with the parsed command line and returns the exit code (failures throw). */
export type Run = (ctx: Context) => Promise<number>;

export function print(ctx: Context, value: unknown, human: string): void {
  ctx.io.stdout(ctx.json ? JSON.stringify(value, null, 2) : human);
}

/** --base-url, else the session's, else $AGENT_WALLET_URL, else localhost; without a trailing slash. */
export function baseUrlOf(ctx: Context, session?: StoredSession): string {
  const raw = (ctx.parsed.values["base-url"] as string | undefined) ?? session?.baseUrl ?? ctx.io.env.AGENT_WALLET_URL ?? DEFAULT_BASE_URL;
  try {
    const url = new URL(raw);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error();
    return url.href.replace(/\/+$/, "");
  } catch {
    throw new UsageError(`--base-url must be an http(s) URL, got ${JSON.stringify(raw)}`, ctx.command);
  }
}

type Connection = { client: AgentWalletClient; via: "api_key" | "oauth"; baseUrl: string; session?: StoredSession; apiKey?: string };

/**
 * The personal key, if any: `--api-key -` reads it from stdin (a prompt without echo at a terminal), else
 * $AGENT_WALLET_API_KEY. A key written on the command line still works, with a warning. It is never stored.
 */
async function personalKey(ctx: Context): Promise<string | undefined> {
  const flag = ctx.parsed.values["api-key"] as string | undefined;
  if (flag === "-") return readSecretLine(ctx.io.stdin, ctx.io.stderr, "Personal API key: ");
  if (flag !== undefined) {
    ctx.io.stderr.write(
      "agent-wallet: warning: a key on the command line is visible in `ps` and kept in your shell history; " +
        "prefer AGENT_WALLET_API_KEY or `--api-key -` (reads it from stdin)\n",
    );
    return flag;
  }
  return ctx.io.env.AGENT_WALLET_API_KEY;
}

/** A client for the personal key if there is one, else for the stored login. */
/** How this CLI is signed in, as the person knows the client from their Clients screen. */
/** How the CLI is signed in; a server that does not name the client (before `account`) leaves the name out. */
export function signedInAs(connection: Connection, clientName: string | undefined): string {
  const named = clientName === undefined ? "" : ` "${clientName}"`;
  return connection.via === "api_key"
    ? `with the personal API key${named} (${connection.apiKey!.slice(0, 13)}…)`
    : `as${named || " client"} (client ${connection.session?.clientId})`;
}

export async function connect(ctx: Context): Promise<Connection> {
  const apiKey = await personalKey(ctx);
  const session = loadSession(ctx.io.env);
  if (apiKey) {
    if (!apiKey.startsWith(API_KEY_PREFIX)) throw new UsageError(`The API key must start with ${API_KEY_PREFIX}`, ctx.command);
    const baseUrl = baseUrlOf(ctx, session);
    return { client: new AgentWalletClient({ baseUrl, apiKey, clientInfo: CLIENT_INFO }), via: "api_key", baseUrl, apiKey };
  }
  if (!session) {
    throw new NotSignedInError(
      "Not signed in: run `agent-wallet login` to sign in, or set AGENT_WALLET_API_KEY to a personal API key from the Clients screen.",
    );
  }
  const baseUrl = baseUrlOf(ctx, session);
  if (baseUrl !== session.baseUrl.replace(/\/+$/, "")) {
    throw new NotSignedInError(
      `Signed in to ${session.baseUrl}, not ${baseUrl}: run \`agent-wallet login --base-url ${baseUrl}\` to sign in there.`,
    );
  }
  let current = session;
  const env = ctx.io.env;
  const client = new AgentWalletClient({
    baseUrl,
    mcpUrl: session.resource,
    tokenEndpoint: session.tokenEndpoint,
    clientId: session.clientId,
    accessToken: session.tokens.accessToken,
    refreshToken: session.tokens.refreshToken,
    expiresAt: session.tokens.expiresAt,
    dpopKey: session.dpopKey,
    clientInfo: CLIENT_INFO,
    onTokens: (tokens) => {
      current = { ...current, tokens, savedAt: new Date().toISOString() };
      saveSession(current, env);
    },
    refreshCoordinator: {
      lock: (critical) => withSessionLock(critical, env),
      load: async () => {
        const stored = loadSession(env);
        // Tokens another process stored are adopted only if bound to this session's key (or, like it, to none).
        const sameKey = JSON.stringify(stored?.dpopKey) === JSON.stringify(session.dpopKey);
        return stored && stored.clientId === session.clientId && sameKey ? stored.tokens : undefined;
      },
    },
  });
  return { client, via: "oauth", baseUrl, session };
}

/** Connects, then finds the command's first argument among the granted credentials: by id, name, or (any case) name or address. */
export async function connectWithCredential(ctx: Context) {
  const { client } = await connect(ctx);
  const ref = ctx.parsed.positionals[0];
  const { credentials, chains } = await client.listCredentials({ signal: ctx.signal });
  const lower = ref.toLowerCase();
  const credential =
    credentials.find((candidate) => candidate.id === ref) ??
    credentials.find((candidate) => candidate.name === ref) ??
    credentials.find((candidate) => candidate.name.toLowerCase() === lower || candidate.address.toLowerCase() === lower);
  if (!credential) {
    const names = credentials.map((candidate) => candidate.name);
    const guess = didYouMean(ref, names);
    const next = guess ? `Did you mean ${JSON.stringify(guess)}?` : "Run `agent-wallet status` to see your grant.";
    throw new CliToolError(`No credential ${JSON.stringify(ref)} in this grant (granted: ${names.join(", ") || "none"}). ${next}`);
  }
  return { client, credential, listed: { credentials, chains } };
}

/** --chain as a chain id; undefined when it is left out. */
export function chainOption(ctx: Context): number | undefined {
  const raw = ctx.parsed.values.chain;
  if (raw === undefined) return undefined;
  if (typeof raw !== "string" || !/^\d+$/.test(raw) || Number(raw) <= 0) {
    throw new UsageError("--chain must be a positive chain id, e.g. 31337", ctx.command);
  }
  return Number(raw);
}

/**
 * The chain for a command whose --chain was left out: the service's only one, or the only one of its chains the
 * credential's limits allow (get_policy); with several, a usage error naming them. A server that does not list its
 * chains (before `chains`) needs --chain.
 */
export async function onlyChain(ctx: Context, client: AgentWalletClient, credentialId: string, listed: Listed): Promise<number> {
  const chains = listed.chains;
  if (!chains?.length) throw new UsageError("--chain <id> is required", ctx.command);
  let usable = chains;
  if (chains.length > 1) {
    const { policy } = await client.getPolicy({ credential_id: credentialId }, { signal: ctx.signal });
    const allowed = policy.chains;
    if (allowed) usable = chains.filter((chain) => allowed.includes(chain.id));
  }
  if (usable.length === 1) return usable[0].id;
  // None allowed at all: name the service's, and let the policy's refusal say the rest.
  const named = (usable.length ? usable : chains).map((chain) => `${chain.id} (${chain.name})`);
  throw new UsageError(`This wallet can use several chains: ${named.join(", ")}. Name one with --chain <id>`, ctx.command);
}

/**
 * Waits for a final status: the approval URL once on its own line (a terminal can open it), then a spinner;
 * Ctrl-C stops waiting and says how to resume the same request (it stays, and is never created twice).
 */
async function waitWithSpinner(ctx: Context, client: AgentWalletClient, first: RequestView, seconds: number): Promise<RequestView> {
  const spinner = new Spinner(ctx.io.stderr);
  const describe = (view: RequestView) =>
    view.status === "pending" ? `Waiting for your approval of request ${view.request_id}` : `Request ${view.request_id} is ${view.status}…`;
  if (first.status === "pending") ctx.io.stderr.write(`Approve it at:\n${first.approval_url}\n`);
  spinner.start(describe(first));
  try {
    const view = await client.waitForRequest(first.request_id, {
      timeout: seconds * 1000,
      signal: ctx.signal,
      onUpdate: (update) => spinner.update(describe(update)),
    });
    spinner.stop();
    return view;
  } catch (error) {
    spinner.stop();
    if (error instanceof WaitTimeoutError) {
      const latest = await client.getRequest({ request_id: first.request_id }, { signal: ctx.signal }).catch(() => first);
      throw new RequestNotCompletedError(latest);
    }
    if (ctx.signal.aborted) {
      throw new InterruptedError(
        `Stopped waiting; request ${first.request_id} stays ${first.status} and is not sent again. ` +
          `To resume: agent-wallet request wait ${first.request_id}`,
      );
    }
    throw error;
  }
}

/** Prints a request: completed, or not final yet (after --no-wait), is success; another final status throws (exit code 3). */
function finish(ctx: Context, view: RequestView): number {
  if (view.status === "completed") {
    const given = view.permission;
    const results = [
      view.signature ? `Signature: ${view.signature}` : null,
      view.tx_hash ? `Transaction: ${view.tx_hash}` : null,
      given ? `Allowance: ${given.allowance_id}, ${given.granted.length} signed delegation(s) for ${given.to} (--json has them)` : null,
    ];
    print(ctx, view, results.filter(Boolean).join("\n") || requestDetails(view));
    return EXIT.ok;
  }
  // Rejected, expired, cancelled or failed: main prints the request, then says why the exit code is 3.
  if (FINAL_STATUSES.includes(view.status)) throw new RequestNotCompletedError(view);
  print(ctx, view, requestDetails(view));
  return EXIT.ok;
}

/** Waits (up to `seconds`) unless the request is already final, then prints it and returns the exit code. */
export async function settle(ctx: Context, client: AgentWalletClient, view: RequestView, seconds: number): Promise<number> {
  return finish(ctx, FINAL_STATUSES.includes(view.status) ? view : await waitWithSpinner(ctx, client, view, seconds));
}

/** What list_credentials answered: the grant's credentials, and the service's chains (from servers that list them). */
type Listed = Pick<Awaited<ReturnType<AgentWalletClient["listCredentials"]>>, "credentials" | "chains">;
type CreateRequest = (client: AgentWalletClient, credentialId: string, listed: Listed, idempotencyKey: string) => Promise<RequestView>;

/**
 * --idempotency-key, else a new key for this run: the tool's retries (the SDK's, or the same command run again with
 * it) answer the first call's request or payment instead of making another.
 */
export function idempotencyKeyOf(ctx: Context): string {
  const given = ctx.parsed.values["idempotency-key"];
  return typeof given === "string" ? given : randomUUID();
}

/**
 * A sensitive tool on the credential named by the first argument: create the request (the tool returns at once),
 * then wait for the person's approval unless --no-wait.
 */
export async function sensitive(ctx: Context, create: CreateRequest): Promise<number> {
  const { client, credential, listed } = await connectWithCredential(ctx);
  const noWait = ctx.parsed.values["no-wait"] === true;
  if (noWait && ctx.parsed.values.wait !== undefined) throw new UsageError("Use either --wait or --no-wait", ctx.command);
  const seconds = secondsOption(ctx.parsed.values, "wait", DEFAULT_WAIT_SECONDS, ctx.command);
  const key = idempotencyKeyOf(ctx);
  let request;
  try {
    request = await create(client, credential.id, listed, key);
  } catch (error) {
    if (!ctx.signal.aborted) throw error;
    throw new InterruptedError(
      "Interrupted before the service answered: the request may exist. " +
        `To get it without asking twice, run the same command with --idempotency-key ${JSON.stringify(key)}`,
    );
  }
  if (!noWait) return settle(ctx, client, request, seconds);
  if (!ctx.json && request.status === "pending") {
    print(
      ctx,
      request,
      `${requestDetails(request)}\n\nApprove it at ${request.approval_url}, then: agent-wallet request wait ${request.request_id}`,
    );
    return EXIT.ok;
  }
  return finish(ctx, request);
}

/** --exact-execution-enforcer: the ExactExecutionEnforcer the CLI's own key may trust, when given. */
export function trustedEnforcer(ctx: Context): Address | undefined {
  const raw = ctx.parsed.values["exact-execution-enforcer"];
  if (raw === undefined) return undefined;
  if (typeof raw !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(raw))
    throw new UsageError("--exact-execution-enforcer must be a 0x-prefixed address", ctx.command);
  return getAddress(raw);
}

/**
 * The credential's allowance that this CLI's own key spends (request-allowance), on `chainId` or, left out, the first,
 * with that key: found in get_allowance's permission; null when the CLI has no key or no allowance names it.
 */
export async function ownKeyAllowance(ctx: Context, client: AgentWalletClient, credentialId: string, chainId?: number) {
  const privateKey = loadAgentKey(ctx.io.env);
  if (!privateKey) return null;
  const account = privateKeyToAccount(privateKey);
  const { allowances } = await client.getAllowance({ credential_id: credentialId }, { signal: ctx.signal });
  const permission = allowances.find(
    (allowance) =>
      (chainId === undefined || allowance.chain_id === chainId) &&
      allowance.permission &&
      isAddressEqual(allowance.permission.to as Address, account.address),
  )?.permission;
  return permission ? { account, permission } : null;
}
