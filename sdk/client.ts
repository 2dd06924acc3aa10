// AgentWalletClient: typed methods for every MCP tool of Agent Wallet, over the
// public /mcp endpoint only.
//
// Transport decision: the server's /mcp is stateless Streamable HTTP that
// answers each POST with one JSON body. The client therefore speaks JSON-RPC
// over fetch itself (initialize once, then tools/call), rather than through the
// MCP SDK's Client: that keeps one place where a 401 becomes a refresh and a
// retry, lets a personal key and an OAuth token share one code path, has no
// session to keep, and still reads an SSE body should a server send one.
import {
  API_KEY_PREFIX,
  isFinalStatus,
  MAX_WAIT_SECONDS,
  TOOLS,
  type RequestView,
  type ToolInput,
  type ToolName,
  type ToolOutput,
} from "../contract";
import {
  AuthenticationError,
  InvalidInputError,
  NetworkError,
  OAuthError,
  ServerError,
  SignInRequiredError,
  ToolError,
  WaitTimeoutError,
} from "./errors";
import { dpopProof, dpopSigner, type DpopKey, type DpopSigner } from "./dpop";
import { authenticationErrorFrom, discover, discoverResource, httpFetch, refresh, sleep, type FetchLike, type TokenSet } from "./oauth";

export const SDK_VERSION = "0.1.0";
/** The MCP protocol version this client asks for in `initialize`. */
export const PROTOCOL_VERSION = "2025-06-18";

type CommonOptions = {
  /** the service's base URL (the OAuth issuer); /mcp is found by discovery */
  baseUrl: string;
  /** skip discovery of the MCP endpoint */
  mcpUrl?: string;
  fetch?: FetchLike;
  /** name sent in MCP `initialize` */
  clientInfo?: { name: string; version: string };
};

export type OAuthClientOptions = CommonOptions & {
  accessToken?: string;
  refreshToken?: string;
  /** needed to refresh: the client_id the tokens were issued to */
  clientId?: string;
  /** when the access token expires (Unix ms); a refresh happens a little before */
  expiresAt?: number;
  /** skip discovery of the token endpoint */
  tokenEndpoint?: string;
  /**
   * Called with every new token set, and awaited before the new tokens are used:
   * the refresh token rotates, so the old one is spent once this is called.
   */
  onTokens?: (tokens: TokenSet) => void | Promise<void>;
  /**
   * For several processes sharing one stored session: runs each refresh inside
   * `lock`, and first asks `load` for the stored tokens, adopting them instead of
   * refreshing when another process already rotated (a second use of a spent
   * refresh token would revoke the client).
   */
  refreshCoordinator?: {
    lock: <T>(critical: () => Promise<T>) => Promise<T>;
    load: () => Promise<TokenSet | undefined>;
  };
  /**
   * The key the tokens are bound to (RFC 9449 DPoP): each /mcp call and refresh then carries a proof signed with
   * it, and the tokens are useless without it. Without a key, tokens are bearer tokens, as before.
   */
  dpopKey?: DpopKey;
  apiKey?: undefined;
};

export type ApiKeyClientOptions = CommonOptions & {
  /** a personal key from the Clients screen, `svc_live_…` */
  apiKey: string;
};

export type AgentWalletClientOptions = OAuthClientOptions | ApiKeyClientOptions;

export type CallOptions = { signal?: AbortSignal };

/** How often a call with an idempotency key is sent in all when its answer is lost (a network error, a 429 or a 5xx). */
const KEYED_CALL_ATTEMPTS = 3;
/** The pause before each of those retries, in milliseconds. */
const KEYED_CALL_BACKOFF_MS = [500, 2_000];

/** Whether a tool takes an idempotency key: those that pay or ask for a signature. */
function takesIdempotencyKey(name: ToolName): boolean {
  return "idempotency_key" in TOOLS[name].input.shape;
}

/** An error after which a call may have run or not: sent again only with its idempotency key. */
function answerLost(error: unknown): boolean {
  if (error instanceof NetworkError) return true;
  return error instanceof ServerError && error.rpcCode === undefined && (error.status === 429 || (error.status ?? 0) >= 500);
}

export type WaitOptions = {
  /** give up after this many milliseconds (default 10 minutes, a request's own lifetime) */
  timeout?: number;
  signal?: AbortSignal;
  /** every view get_request returned while waiting */
  onUpdate?: (request: RequestView) => void;
};

type JsonRpcResponse = {
  jsonrpc: "2.0";
  id?: number | string | null;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
};

const REFRESH_EARLY_MS = 30_000;

function isApiKeyOptions(options: AgentWalletClientOptions): options is ApiKeyClientOptions {
  return typeof (options as ApiKeyClientOptions).apiKey === "string";
}

/** Reads a JSON-RPC message with the given id out of an SSE body. */
function fromEventStream(text: string, id: number): JsonRpcResponse | undefined {
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).replace(/^ /, ""))
      .join("\n");
    if (!data) continue;
    try {
      const message = JSON.parse(data) as JsonRpcResponse;
      if (message && message.id === id) return message;
    } catch {
      // not JSON: skip
    }
  }
  return undefined;
}

export class AgentWalletClient {
  readonly baseUrl: string;
  private readonly options: AgentWalletClientOptions;
  private readonly apiKey?: string;
  private tokenSet?: TokenSet;
  private mcpUrl?: string;
  private tokenEndpoint?: string;
  private refreshing?: Promise<void>;
  private dpop?: Promise<DpopSigner>;
  private initialized?: Promise<void>;
  private protocolVersion = PROTOCOL_VERSION;
  private sessionId?: string;
  private nextId = 1;

  constructor(options: AgentWalletClientOptions) {
    this.options = options;
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    new URL(this.baseUrl); // a malformed base URL fails here, not on the first call
    this.mcpUrl = options.mcpUrl;
    if (isApiKeyOptions(options)) {
      if (!options.apiKey.startsWith(API_KEY_PREFIX)) throw new TypeError(`apiKey must be a personal key, ${API_KEY_PREFIX}…`);
      this.apiKey = options.apiKey;
    } else {
      this.tokenEndpoint = options.tokenEndpoint;
      if (options.dpopKey) {
        this.dpop = dpopSigner(options.dpopKey);
        this.dpop.catch(() => {}); // an unusable key is reported by the first call that needs it
      }
      if (options.accessToken || options.refreshToken) {
        this.tokenSet = {
          accessToken: options.accessToken ?? "",
          tokenType: options.dpopKey ? "DPoP" : "Bearer",
          ...(options.refreshToken ? { refreshToken: options.refreshToken } : {}),
          ...(options.expiresAt ? { expiresAt: options.expiresAt } : {}),
        };
      }
    }
  }

  /** The tokens in use now (after any refresh); undefined for a personal key. */
  get tokens(): TokenSet | undefined {
    return this.tokenSet ? { ...this.tokenSet } : undefined;
  }

  // ---------- the tools ----------

  /** The credentials this client was granted, with the approval mode of each. */
  listCredentials(options?: CallOptions): Promise<ToolOutput<"list_credentials">> {
    return this.callTool("list_credentials", {}, options);
  }
  /** Native balance of a credential on a chain. */
  getBalance(input: ToolInput<"get_balance">, options?: CallOptions): Promise<ToolOutput<"get_balance">> {
    return this.callTool("get_balance", input, options);
  }
  // The tools that pay or ask for a signature take `idempotency_key`; left out, callTool makes a new one for the call,
  // with which it sends the call again when its answer is lost. Give your own to make your own retries safe (after a
  // crash, say): the same key and arguments answer the first call's request or payment, never a second one.

  /** Asks the person to sign an EIP-191 message: returns the request (pending unless `wait_seconds` saw it decided). */
  signMessage(input: ToolInput<"sign_message">, options?: CallOptions): Promise<ToolOutput<"sign_message">> {
    return this.callTool("sign_message", input, options);
  }
  /** Asks the person to sign EIP-712 typed data. */
  signTypedData(input: ToolInput<"sign_typed_data">, options?: CallOptions): Promise<ToolOutput<"sign_typed_data">> {
    return this.callTool("sign_typed_data", input, options);
  }
  /** Asks the person to sign and broadcast a transaction (`value` in wei, decimal string). */
  sendTransaction(input: ToolInput<"send_transaction">, options?: CallOptions): Promise<ToolOutput<"send_transaction">> {
    return this.callTool("send_transaction", input, options);
  }
  getRequest(input: ToolInput<"get_request">, options?: CallOptions): Promise<ToolOutput<"get_request">> {
    return this.callTool("get_request", input, options);
  }
  listRequests(input: ToolInput<"list_requests"> = {}, options?: CallOptions): Promise<ToolOutput<"list_requests">> {
    return this.callTool("list_requests", input, options);
  }
  cancelRequest(input: ToolInput<"cancel_request">, options?: CallOptions): Promise<ToolOutput<"cancel_request">> {
    return this.callTool("cancel_request", input, options);
  }
  /** The spending policy of a granted credential and what is left of each limit. */
  getPolicy(input: ToolInput<"get_policy">, options?: CallOptions): Promise<ToolOutput<"get_policy">> {
    return this.callTool("get_policy", input, options);
  }
  /**
   * Asks the person for an allowance that a key you hold spends (ERC-7715's permission request; `to` is that key's
   * address, for instance a viem account's): returns the pending request. Once the person approved it, the request's
   * `permission` carries the signed delegations; `ownRedemption` turns one into the transaction your key sends.
   */
  requestAllowance(input: ToolInput<"request_allowance">, options?: CallOptions): Promise<ToolOutput<"request_allowance">> {
    return this.callTool("request_allowance", input, options);
  }
  /** Tells the service of a slice you signed of an allowance your key spends (sliceAllowance signs and calls it). */
  registerAllowanceSlice(
    input: ToolInput<"register_allowance_slice">,
    options?: CallOptions,
  ): Promise<ToolOutput<"register_allowance_slice">> {
    return this.callTool("register_allowance_slice", input, options);
  }
  /**
   * The relayer's one-time delegation of a payment from an allowance your key spends, for that key to sign: check it
   * before you sign (payFromAllowance does both, and sends it).
   */
  prepareAllowancePayment(
    input: ToolInput<"prepare_allowance_payment">,
    options?: CallOptions,
  ): Promise<ToolOutput<"prepare_allowance_payment">> {
    return this.callTool("prepare_allowance_payment", input, options);
  }
  /** Sends prepareAllowancePayment's delegation, signed by your key: the relayer pays it and its gas. */
  sendAllowancePayment(input: ToolInput<"send_allowance_payment">, options?: CallOptions): Promise<ToolOutput<"send_allowance_payment">> {
    return this.callTool("send_allowance_payment", input, options);
  }
  /** The on-chain allowances of a granted credential: what is left this period, when it resets and when it ends. */
  getAllowance(input: ToolInput<"get_allowance">, options?: CallOptions): Promise<ToolOutput<"get_allowance">> {
    return this.callTool("get_allowance", input, options);
  }
  /**
   * Pays a resource's x402 requirement (its PAYMENT-REQUIRED header value, or a V1 402 body) from the credential's
   * allowance with no tap: resolves with the header and value to retry the request with.
   */
  payX402(input: ToolInput<"pay_x402">, options?: CallOptions): Promise<ToolOutput<"pay_x402">> {
    return this.callTool("pay_x402", input, options);
  }

  /**
   * Waits until a request reaches a final status (completed, failed, rejected,
   * expired, cancelled) and resolves with it, whatever it is: check `status`.
   * Long-polls get_request with `wait_seconds`. Throws WaitTimeoutError after
   * `timeout` ms, or the signal's reason when aborted.
   */
  async waitForRequest(requestId: string, options: WaitOptions = {}): Promise<RequestView> {
    const deadline = Date.now() + (options.timeout ?? 10 * 60_000);
    let last: RequestView | undefined;
    for (;;) {
      options.signal?.throwIfAborted();
      const remaining = deadline - Date.now();
      const waitSeconds = Math.max(0, Math.min(MAX_WAIT_SECONDS, Math.floor(remaining / 1000)));
      const started = Date.now();
      const view = await this.getRequest({ request_id: requestId, wait_seconds: waitSeconds }, { signal: options.signal });
      options.onUpdate?.(view);
      if (isFinalStatus(view.status)) return view;
      if (Date.now() >= deadline) throw new WaitTimeoutError(requestId, view.status);
      // A server that answered at once with nothing new must not make this spin.
      if (Date.now() - started < 1000 && view.status === last?.status)
        await sleep(Math.min(1000, Math.max(0, deadline - Date.now())), options.signal);
      last = view;
    }
  }

  /**
   * Any tool by name, typed from the shared schemas; the input is validated before it is sent. A tool that pays or asks
   * for a signature is sent with an idempotency key (the input's, else a new one), and sent again with it, up to three
   * times in all, when its answer is lost: the service answers a retry with the first call's result.
   */
  async callTool<T extends ToolName>(name: T, input: ToolInput<T>, options: CallOptions = {}): Promise<ToolOutput<T>> {
    const tool = TOOLS[name];
    if (!tool) throw new InvalidInputError(String(name), `Unknown tool ${String(name)}`);
    const parsed = tool.input.safeParse(input ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new InvalidInputError(name, `${name}: ${issue.path.length ? `${issue.path.join(".")}: ` : ""}${issue.message}`);
    }
    const args = parsed.data as Record<string, unknown>;
    const keyed = takesIdempotencyKey(name);
    if (keyed) args.idempotency_key ??= globalThis.crypto.randomUUID();
    const waitSeconds = (args as { wait_seconds?: number }).wait_seconds ?? 0;
    const send = () => this.rpc("tools/call", { name, arguments: args }, { signal: options.signal, timeoutMs: (waitSeconds + 30) * 1000 });
    let result: unknown;
    for (let attempt = 1; ; attempt++) {
      try {
        result = await send();
        break;
      } catch (error) {
        if (!keyed || attempt >= KEYED_CALL_ATTEMPTS || options.signal?.aborted || !answerLost(error)) throw error;
        await sleep(KEYED_CALL_BACKOFF_MS[attempt - 1], options.signal);
      }
    }
    const call = result as { isError?: boolean; content?: { type: string; text?: string }[]; structuredContent?: unknown };
    const text = (call.content ?? [])
      .filter((part) => part.type === "text" && typeof part.text === "string")
      .map((part) => part.text)
      .join("\n");
    if (call.isError) {
      const details = call.structuredContent;
      throw new ToolError(
        name,
        text || `${name} failed`,
        details && typeof details === "object" ? (details as Record<string, unknown>) : undefined,
      );
    }
    let structured = call.structuredContent;
    if (structured === undefined && text) {
      try {
        structured = JSON.parse(text);
      } catch {
        // leave it undefined: reported below
      }
    }
    const output = tool.output.safeParse(structured);
    if (!output.success)
      throw new ServerError(`${name} returned a result that does not match its schema: ${output.error.issues[0]?.message}`);
    return output.data as ToolOutput<T>;
  }

  // ---------- JSON-RPC over Streamable HTTP ----------

  private async rpc(method: string, params: unknown, options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<unknown> {
    await this.initialize(options.signal);
    return this.request(method, params, options);
  }

  private initialize(signal?: AbortSignal): Promise<void> {
    this.initialized ??= (async () => {
      const result = (await this.request(
        "initialize",
        {
          protocolVersion: PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: this.options.clientInfo ?? { name: "agent-wallet-sdk", version: SDK_VERSION },
        },
        { signal },
      )) as { protocolVersion?: string };
      if (typeof result?.protocolVersion === "string") this.protocolVersion = result.protocolVersion;
      await this.post({ jsonrpc: "2.0", method: "notifications/initialized" }, { signal });
    })().catch((error) => {
      this.initialized = undefined; // try again on the next call
      throw error;
    });
    return this.initialized;
  }

  private async request(method: string, params: unknown, options: { signal?: AbortSignal; timeoutMs?: number }): Promise<unknown> {
    const id = this.nextId++;
    const response = await this.post({ jsonrpc: "2.0", id, method, params }, options);
    const type = response.headers.get("content-type") ?? "";
    const text = await response.text();
    let message: JsonRpcResponse | undefined;
    if (type.includes("text/event-stream")) message = fromEventStream(text, id);
    else {
      try {
        message = JSON.parse(text) as JsonRpcResponse;
      } catch {
        message = undefined;
      }
    }
    if (!response.ok && !message?.error) {
      const detail = (message as { error_description?: string } | undefined)?.error_description;
      throw new ServerError(`${method}: the server answered HTTP ${response.status}${detail ? ` (${detail})` : ""}`, response.status);
    }
    if (!message) throw new ServerError(`${method}: the server's answer is not a JSON-RPC message`, response.status);
    if (message.error) {
      const toolName = method === "tools/call" ? String((params as { name: string }).name) : undefined;
      // Invalid params / unknown tool on a call: the tool refused it.
      if (toolName && (message.error.code === -32602 || message.error.code === -32601))
        throw new ToolError(toolName, message.error.message);
      throw new ServerError(`${method}: ${message.error.message}`, response.status, message.error.code);
    }
    return message.result;
  }

  /** One POST to /mcp with the bearer (or the DPoP-bound token and a fresh proof); a 401 refreshes (once) and retries. */
  private async post(body: unknown, options: { signal?: AbortSignal; timeoutMs?: number }): Promise<Response> {
    const mcpUrl = await this.resolveMcpUrl(options.signal);
    for (let attempt = 0; ; attempt++) {
      const bearer = await this.bearer(options.signal);
      // A proof goes with a token the server bound (token_type DPoP); a bearer token it answered stays a bearer.
      const signer = this.tokenSet?.tokenType.toLowerCase() === "dpop" ? await this.dpop : undefined;
      const headers: Record<string, string> = {
        Authorization: `${signer ? "DPoP" : "Bearer"} ${bearer}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "MCP-Protocol-Version": this.protocolVersion,
      };
      if (signer) headers.DPoP = await dpopProof(signer, "POST", mcpUrl, bearer);
      if (this.sessionId) headers["Mcp-Session-Id"] = this.sessionId;
      const response = await httpFetch(
        mcpUrl,
        { method: "POST", headers, body: JSON.stringify(body) },
        { fetch: this.options.fetch, signal: options.signal, timeoutMs: options.timeoutMs },
      );
      const session = response.headers.get("mcp-session-id");
      if (session) this.sessionId = session;
      if (response.status !== 401) return response;

      const refused = authenticationErrorFrom(response, this.apiKey ? "The API key was refused" : "The access token was refused");
      await response.body?.cancel().catch(() => {});
      if (this.apiKey) throw refused;
      const reason = refused.description ? ` (${refused.description})` : "";
      if (attempt > 0)
        throw new SignInRequiredError(
          `Still refused after a refresh${reason}: sign in again`,
          refused.description,
          refused.resourceMetadata,
        );
      if (!this.tokenSet?.refreshToken) {
        throw new SignInRequiredError(
          `The session ended${reason} and there is no refresh token: sign in again`,
          refused.description,
          refused.resourceMetadata,
        );
      }
      await this.refreshOnce(bearer, refused, options.signal);
    }
  }

  private async bearer(signal?: AbortSignal): Promise<string> {
    if (this.apiKey) return this.apiKey;
    const tokens = this.tokenSet;
    if (!tokens) throw new SignInRequiredError("No access token: sign in first");
    if (
      tokens.refreshToken &&
      (!tokens.accessToken || (tokens.expiresAt !== undefined && tokens.expiresAt - REFRESH_EARLY_MS <= Date.now()))
    ) {
      await this.refreshOnce(tokens.accessToken, undefined, signal);
    }
    return this.tokenSet!.accessToken;
  }

  /** One refresh at a time; a caller whose token was already replaced by another refresh just retries. */
  private refreshOnce(staleAccessToken: string, refused: AuthenticationError | undefined, signal?: AbortSignal): Promise<void> {
    if (this.tokenSet && this.tokenSet.accessToken !== staleAccessToken) return Promise.resolve();
    this.refreshing ??= this.doRefresh(staleAccessToken, refused, signal).finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async doRefresh(staleAccessToken: string, refused: AuthenticationError | undefined, signal?: AbortSignal): Promise<void> {
    const options = this.options as OAuthClientOptions;
    const reason = refused?.description ? ` (${refused.description})` : "";
    const run = async () => {
      if (options.refreshCoordinator) {
        const stored = await options.refreshCoordinator.load();
        if (stored && stored.accessToken !== staleAccessToken && stored.refreshToken !== this.tokenSet?.refreshToken) {
          this.tokenSet = stored; // another process rotated already
          return;
        }
      }
      const current = this.tokenSet;
      if (!current?.refreshToken) throw new SignInRequiredError(`The session ended${reason} and there is no refresh token: sign in again`);
      if (!options.clientId)
        throw new SignInRequiredError(`The session ended${reason}, and without a client id it cannot be refreshed: sign in again`);
      this.tokenEndpoint ??= (await discover(this.baseUrl, { fetch: options.fetch, signal })).tokenEndpoint;
      let fresh: TokenSet;
      try {
        fresh = await refresh(
          { tokenEndpoint: this.tokenEndpoint, clientId: options.clientId, refreshToken: current.refreshToken, dpopKey: await this.dpop },
          { fetch: options.fetch, signal },
        );
      } catch (error) {
        if (error instanceof OAuthError) {
          const why = error.description ?? error.code;
          throw new SignInRequiredError(
            `The session ended${reason} and could not be refreshed (${why}): sign in again`,
            refused?.description ?? why,
            refused?.resourceMetadata,
            { cause: error },
          );
        }
        throw error;
      }
      // The old refresh token is spent now. Persist the new one before using it.
      try {
        await options.onTokens?.(fresh);
      } finally {
        this.tokenSet = fresh;
      }
    };
    await (options.refreshCoordinator ? options.refreshCoordinator.lock(run) : run());
  }

  private async resolveMcpUrl(signal?: AbortSignal): Promise<string> {
    this.mcpUrl ??= await discoverResource(this.baseUrl, { fetch: this.options.fetch, signal });
    return this.mcpUrl;
  }
}
