// agent-wallet: the CLI over the typed SDK. Every command speaks only the public
// surface (discovery, registration, authorize, token, /mcp).
import fs from "node:fs";
import {
  AgentWalletClient,
  AuthenticationError,
  FINAL_STATUSES,
  InvalidInputError,
  NetworkError,
  OAuthError,
  ServerError,
  SignInRequiredError,
  ToolError,
  WaitTimeoutError,
  REQUEST_STATUSES,
  type RequestStatus,
  type RequestView,
} from "../sdk";
import { AmountError, parseAmount } from "./amount";
import { commandHelp, DEFAULT_WAIT_SECONDS, mainHelp, parseCommandLine, secondsOption, UsageError, type CommandSpec, type ParsedCommandLine } from "./args";
import { configFile, deleteSession, loadSession, saveSession, withSessionLock, type StoredSession } from "./config";
import { keyValues, requestDetails, requestsTable, table } from "./format";
import { CLIENT_NAME, login, LoginError } from "./login";
import { Spinner } from "./spinner";

export const DEFAULT_BASE_URL = "http://localhost:3000";

export const EXIT = { ok: 0, usage: 1, auth: 2, request: 3, tool: 4, network: 5 } as const;

/** Not signed in at all (no session, no key). */
class NotSignedInError extends Error {}
/** A request ended in another state than completed (or is still pending when the wait ran out). */
class RequestNotCompletedError extends Error {
  constructor(readonly request: RequestView) {
    super(`Request ${request.request_id} ${request.status === "pending" ? "is still pending" : `was ${request.status}`}${request.reason ? `: ${request.reason}` : ""}`);
  }
}
/** A tool-level refusal found by the CLI itself (e.g. no such credential in the grant). */
class CliToolError extends Error {}

export type Io = {
  stdout: (text: string) => void;
  stderr: NodeJS.WriteStream;
  stdin: NodeJS.ReadStream;
  env: NodeJS.ProcessEnv;
};

type Context = {
  parsed: ParsedCommandLine;
  command: CommandSpec;
  json: boolean;
  io: Io;
  signal: AbortSignal;
};

function print(ctx: Context, value: unknown, human: string): void {
  ctx.io.stdout(ctx.json ? JSON.stringify(value, null, 2) : human);
}

function baseUrlOf(ctx: Context, session?: StoredSession): string {
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

function connect(ctx: Context): Connection {
  const apiKey = (ctx.parsed.values["api-key"] as string | undefined) ?? ctx.io.env.AGENT_WALLET_API_KEY;
  const session = loadSession(ctx.io.env);
  if (apiKey) {
    if (!apiKey.startsWith("svc_live_")) throw new UsageError("The API key must start with svc_live_", ctx.command);
    const baseUrl = baseUrlOf(ctx, session);
    return { client: new AgentWalletClient({ baseUrl, apiKey, clientInfo: { name: "agent-wallet-cli", version: "0.1.0" } }), via: "api_key", baseUrl, apiKey };
  }
  if (!session) throw new NotSignedInError("Not signed in: run `agent-wallet login` (or set AGENT_WALLET_API_KEY to a personal key)");
  const baseUrl = baseUrlOf(ctx, session);
  if (baseUrl !== session.baseUrl.replace(/\/+$/, "")) {
    throw new NotSignedInError(`Signed in to ${session.baseUrl}, not ${baseUrl}: run \`agent-wallet login --base-url ${baseUrl}\``);
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
    clientInfo: { name: "agent-wallet-cli", version: "0.1.0" },
    onTokens: (tokens) => {
      current = { ...current, tokens, savedAt: new Date().toISOString() };
      saveSession(current, env);
    },
    refreshCoordinator: {
      lock: (critical) => withSessionLock(critical, env),
      load: async () => {
        const stored = loadSession(env);
        return stored && stored.clientId === session.clientId ? stored.tokens : undefined;
      },
    },
  });
  return { client, via: "oauth", baseUrl, session };
}

async function resolveCredential(ctx: Context, client: AgentWalletClient, ref: string) {
  const { credentials } = await client.listCredentials({ signal: ctx.signal });
  const lower = ref.toLowerCase();
  const found =
    credentials.find((credential) => credential.id === ref) ??
    credentials.find((credential) => credential.name === ref) ??
    credentials.find((credential) => credential.name.toLowerCase() === lower || credential.address.toLowerCase() === lower);
  if (!found) {
    const known = credentials.map((credential) => credential.name).join(", ") || "none";
    throw new CliToolError(`No credential ${JSON.stringify(ref)} in this grant (granted: ${known}); see \`agent-wallet credentials\``);
  }
  return found;
}

function chainOption(ctx: Context): number {
  const raw = ctx.parsed.values.chain;
  if (raw === undefined) throw new UsageError("--chain <id> is required", ctx.command);
  if (typeof raw !== "string" || !/^\d+$/.test(raw) || Number(raw) <= 0) throw new UsageError("--chain must be a positive chain id, e.g. 31337", ctx.command);
  return Number(raw);
}

function requireString(ctx: Context, name: string): string {
  const raw = ctx.parsed.values[name];
  if (typeof raw !== "string" || !raw) throw new UsageError(`--${name} is required`, ctx.command);
  return raw;
}

/** Waits for a final status with a spinner that shows where to approve; Ctrl-C stops waiting (the request stays). */
async function waitWithSpinner(ctx: Context, client: AgentWalletClient, first: RequestView, seconds: number): Promise<RequestView> {
  const spinner = new Spinner(ctx.io.stderr);
  const describe = (view: RequestView) =>
    view.status === "pending" ? `Waiting for your approval (request ${view.request_id}): ${view.approval_url}` : `Request ${view.request_id} is ${view.status}…`;
  spinner.start(describe(first));
  try {
    const view = await client.waitForRequest(first.request_id, { timeout: seconds * 1000, signal: ctx.signal, onUpdate: (update) => spinner.update(describe(update)) });
    spinner.stop();
    return view;
  } catch (error) {
    spinner.stop();
    if (error instanceof WaitTimeoutError) {
      const latest = await client.getRequest({ request_id: first.request_id }, { signal: ctx.signal }).catch(() => first);
      throw new RequestNotCompletedError(latest);
    }
    if (ctx.signal.aborted) {
      ctx.io.stderr.write(`Stopped waiting; request ${first.request_id} stays ${first.status}. Resume with: agent-wallet request wait ${first.request_id}\n`);
    }
    throw error;
  }
}

function finish(ctx: Context, view: RequestView): number {
  const human =
    view.status === "completed"
      ? [view.signature ? `Signature: ${view.signature}` : null, view.tx_hash ? `Transaction: ${view.tx_hash}` : null].filter(Boolean).join("\n") || requestDetails(view)
      : requestDetails(view);
  if (view.status === "completed") {
    print(ctx, view, human);
    return EXIT.ok;
  }
  // Rejected, expired, cancelled or failed: main prints the request, then says why the exit code is 3.
  if (FINAL_STATUSES.includes(view.status)) throw new RequestNotCompletedError(view);
  print(ctx, view, requestDetails(view));
  return EXIT.ok;
}

/** A sensitive tool: create the request (returns at once), then wait unless --no-wait. */
async function sensitive(ctx: Context, client: AgentWalletClient, create: () => Promise<RequestView>): Promise<number> {
  if (ctx.parsed.values["no-wait"] && ctx.parsed.values.wait !== undefined) throw new UsageError("Use either --wait or --no-wait", ctx.command);
  const seconds = secondsOption(ctx.parsed.values, "wait", DEFAULT_WAIT_SECONDS, ctx.command);
  const request = await create();
  if (ctx.parsed.values["no-wait"] || FINAL_STATUSES.includes(request.status)) {
    if (!ctx.json && request.status === "pending") {
      print(ctx, request, `${requestDetails(request)}\n\nApprove it at ${request.approval_url}, then: agent-wallet request wait ${request.request_id}`);
      return EXIT.ok;
    }
    return finish(ctx, request);
  }
  return finish(ctx, await waitWithSpinner(ctx, client, request, seconds));
}

async function readTypedData(ctx: Context, source: string): Promise<unknown> {
  let text: string;
  try {
    if (source === "-") {
      const chunks: Buffer[] = [];
      for await (const chunk of ctx.io.stdin) chunks.push(Buffer.from(chunk));
      text = Buffer.concat(chunks).toString("utf8");
    } else {
      text = fs.readFileSync(source, "utf8");
    }
  } catch (error) {
    throw new UsageError(`Cannot read ${source}: ${(error as Error).message}`, ctx.command);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${source === "-" ? "stdin" : source} is not JSON: expected EIP-712 typed data {domain, types, primaryType, message}`, ctx.command);
  }
}

async function run(ctx: Context): Promise<number> {
  const { parsed, command } = ctx;
  const [first, second] = parsed.positionals;
  switch (command.name) {
    case "login": {
      const session = loadSession(ctx.io.env);
      const baseUrl = baseUrlOf(ctx, (parsed.values["base-url"] as string | undefined) ? undefined : session);
      const port = parsed.values.port === undefined ? 0 : Number(parsed.values.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError("--port must be a port number", command);
      const say = ctx.json ? (line: string) => ctx.io.stderr.write(`${line}\n`) : (line: string) => ctx.io.stdout(line);
      const stored = await login({
        baseUrl,
        port,
        openBrowser: !parsed.values["no-browser"],
        timeoutSeconds: secondsOption(parsed.values, "timeout", 600, command),
        say,
        env: ctx.io.env,
        signal: ctx.signal,
      });
      print(
        ctx,
        { baseUrl: stored.baseUrl, clientId: stored.clientId, scope: stored.tokens.scope ?? null, configFile: configFile(ctx.io.env) },
        `Signed in to ${stored.baseUrl} as "${CLIENT_NAME}" (client ${stored.clientId}).${stored.tokens.refreshToken ? "" : "\nYou did not choose to stay connected: the session ends in an hour."}`,
      );
      return EXIT.ok;
    }
    case "logout": {
      const session = loadSession(ctx.io.env);
      const removed = deleteSession(ctx.io.env);
      print(
        ctx,
        { signedOut: removed, baseUrl: session?.baseUrl ?? null },
        removed
          ? `Signed out of ${session?.baseUrl ?? "the service"}: the stored session is deleted.\nTo revoke this client's access on the server too, use the Clients screen of the app.`
          : "Not signed in: nothing to do.",
      );
      return EXIT.ok;
    }
    case "whoami": {
      const connection = connect(ctx);
      const { credentials } = await connection.client.listCredentials({ signal: ctx.signal });
      const tokens = connection.client.tokens;
      const result = {
        baseUrl: connection.baseUrl,
        auth: connection.via,
        clientId: connection.session?.clientId ?? null,
        apiKey: connection.apiKey ? `${connection.apiKey.slice(0, 13)}…` : null,
        scope: tokens?.scope ?? null,
        expiresAt: tokens?.expiresAt ? new Date(tokens.expiresAt).toISOString() : null,
        staysConnected: connection.via === "oauth" ? Boolean(tokens?.refreshToken) : null,
        credentials,
      };
      print(
        ctx,
        result,
        keyValues([
          ["Service", result.baseUrl],
          ["Signed in", connection.via === "api_key" ? `with a personal API key (${result.apiKey})` : `as ${CLIENT_NAME} (client ${result.clientId})`],
          ["Scope", result.scope],
          ["Access until", result.expiresAt],
          ["Stays connected", result.staysConnected === null ? null : result.staysConnected ? "yes" : "no"],
          ["Credentials", credentials.map((credential) => `${credential.name} (${credential.mode})`).join(", ") || "none granted"],
        ]),
      );
      return EXIT.ok;
    }
    case "credentials": {
      const { credentials } = await connect(ctx).client.listCredentials({ signal: ctx.signal });
      print(
        ctx,
        { credentials },
        credentials.length
          ? table(credentials, [
              { header: "NAME", value: (c) => c.name },
              { header: "MODE", value: (c) => c.mode },
              { header: "KIND", value: (c) => c.kind },
              { header: "ADDRESS", value: (c) => c.address },
              { header: "ID", value: (c) => c.id },
            ])
          : "No credentials granted.",
      );
      return EXIT.ok;
    }
    case "balance": {
      const chainId = chainOption(ctx);
      const { client } = connect(ctx);
      const credential = await resolveCredential(ctx, client, first);
      const balance = await client.getBalance({ credential_id: credential.id, chain_id: chainId }, { signal: ctx.signal });
      print(ctx, balance, `${balance.formatted} ${balance.symbol}  (${balance.wei} wei, ${credential.name} ${balance.address} on ${balance.chain_name})`);
      return EXIT.ok;
    }
    case "sign-message": {
      const { client } = connect(ctx);
      const credential = await resolveCredential(ctx, client, first);
      return sensitive(ctx, client, () => client.signMessage({ credential_id: credential.id, message: second }, { signal: ctx.signal }));
    }
    case "sign-typed-data": {
      const typedData = await readTypedData(ctx, second);
      const { client } = connect(ctx);
      const credential = await resolveCredential(ctx, client, first);
      return sensitive(ctx, client, () => client.signTypedData({ credential_id: credential.id, typed_data: typedData as never }, { signal: ctx.signal }));
    }
    case "send": {
      const chainId = chainOption(ctx);
      const to = requireString(ctx, "to");
      const value = parseAmount(requireString(ctx, "value"));
      const data = parsed.values.data as string | undefined;
      const { client } = connect(ctx);
      const credential = await resolveCredential(ctx, client, first);
      return sensitive(ctx, client, () =>
        client.sendTransaction({ credential_id: credential.id, chain_id: chainId, to, value, ...(data ? { data } : {}) }, { signal: ctx.signal }),
      );
    }
    case "request get": {
      const view = await connect(ctx).client.getRequest({ request_id: first }, { signal: ctx.signal });
      print(ctx, view, requestDetails(view));
      return EXIT.ok;
    }
    case "request wait": {
      const { client } = connect(ctx);
      const seconds = secondsOption(parsed.values, "timeout", DEFAULT_WAIT_SECONDS, command);
      const view = await client.getRequest({ request_id: first }, { signal: ctx.signal });
      return finish(ctx, FINAL_STATUSES.includes(view.status) ? view : await waitWithSpinner(ctx, client, view, seconds));
    }
    case "request cancel": {
      const view = await connect(ctx).client.cancelRequest({ request_id: first }, { signal: ctx.signal });
      print(ctx, view, view.status === "cancelled" ? `Cancelled request ${view.request_id}.` : requestDetails(view));
      return EXIT.ok;
    }
    case "requests": {
      const status = parsed.values.status as string | undefined;
      if (status !== undefined && !REQUEST_STATUSES.includes(status as RequestStatus)) {
        throw new UsageError(`--status must be one of ${REQUEST_STATUSES.join(", ")}`, command);
      }
      const limit = parsed.values.limit === undefined ? undefined : Number(parsed.values.limit);
      if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 100)) throw new UsageError("--limit must be 1 to 100", command);
      const { requests } = await connect(ctx).client.listRequests(
        { ...(status ? { status: status as RequestStatus } : {}), ...(limit ? { limit } : {}) },
        { signal: ctx.signal },
      );
      print(ctx, { requests }, requestsTable(requests));
      return EXIT.ok;
    }
  }
  throw new UsageError(`Unknown command: ${command.name}`);
}

/** The exit code and the message for an error (messages say what to do next). */
export function describeError(error: unknown): { code: number; message: string } {
  if (error instanceof UsageError || error instanceof AmountError || error instanceof InvalidInputError) return { code: EXIT.usage, message: error.message };
  if (error instanceof NotSignedInError) return { code: EXIT.auth, message: error.message };
  if (error instanceof SignInRequiredError) {
    const revoked = /revoked/i.test(`${error.description ?? ""} ${error.message}`);
    const detail = error.description ? ` (${error.description})` : "";
    return {
      code: EXIT.auth,
      message: revoked
        ? `This client's access was revoked${detail}. Sign in again: agent-wallet login`
        : `Your session has expired and could not be renewed${detail}. Sign in again: agent-wallet login`,
    };
  }
  if (error instanceof AuthenticationError) {
    return { code: EXIT.auth, message: `The API key was refused${error.description ? ` (${error.description})` : ""}. Issue a new key on the Clients screen of the app.` };
  }
  if (error instanceof OAuthError || error instanceof LoginError) {
    const denied = error instanceof OAuthError && error.code === "access_denied";
    return { code: EXIT.auth, message: denied ? "Sign-in was denied on the consent screen." : `Sign-in failed: ${error.message}` };
  }
  if (error instanceof RequestNotCompletedError) return { code: EXIT.request, message: error.message };
  if (error instanceof ToolError || error instanceof CliToolError) return { code: EXIT.tool, message: error.message };
  if (error instanceof NetworkError || error instanceof ServerError) return { code: EXIT.network, message: error.message };
  if (error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError")) return { code: 130, message: "Interrupted" };
  return { code: EXIT.network, message: `Unexpected error: ${error instanceof Error ? error.message : String(error)}` };
}

export async function main(argv: string[], io: Io, signal: AbortSignal = new AbortController().signal): Promise<number> {
  let parsed: ParsedCommandLine;
  const json = argv.includes("--json");
  try {
    parsed = parseCommandLine(argv);
  } catch (error) {
    const usage = error as UsageError;
    io.stderr.write(`agent-wallet: ${usage.message}\nRun \`agent-wallet ${usage.command ? `${usage.command.name} ` : ""}--help\` for usage.\n`);
    return EXIT.usage;
  }
  if (parsed.help || !parsed.command) {
    io.stdout(parsed.command ? commandHelp(parsed.command) : mainHelp());
    return EXIT.ok;
  }
  const ctx: Context = { parsed, command: parsed.command, json: parsed.values.json === true, io, signal };
  try {
    return await run(ctx);
  } catch (error) {
    if (error instanceof RequestNotCompletedError) {
      // The request itself is the result: print it, then say why the exit code is 3.
      print(ctx, error.request, requestDetails(error.request));
    }
    const { code, message } = describeError(error);
    if (json) io.stderr.write(`${JSON.stringify({ error: { exitCode: code, message } })}\n`);
    else io.stderr.write(`agent-wallet: ${message}\n`);
    if (code === EXIT.usage && error instanceof UsageError) io.stderr.write(`Run \`agent-wallet ${ctx.command.name} --help\` for usage.\n`);
    return code;
  }
}
