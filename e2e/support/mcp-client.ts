// The real MCP clients, as agents use them: the SDK's v1 (2025-11-25) StreamableHTTPClientTransport with an
// OAuthClientProvider, and its v2 Client speaking 2026-07-28; plus a loopback callback listener.
import http from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { freePort } from "./app";

/** An in-memory OAuthClientProvider: what a desktop MCP client keeps on disk. */
export class MemoryOAuthProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  storedTokens?: OAuthTokens;
  verifier = "";
  authorizationUrl?: URL;
  tokenHistory: OAuthTokens[] = [];
  /** Set to a client metadata document's URL to use it as client_id instead of registering (CIMD). */
  clientMetadataUrl?: string;

  constructor(
    readonly callbackUrl: string,
    readonly name = "Test Agent",
  ) {}

  /** A fresh state per authorization request, as a careful client sends. */
  state() {
    this.lastState = crypto.randomUUID();
    return this.lastState;
  }
  lastState?: string;

  get redirectUrl() {
    return this.callbackUrl;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.callbackUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.storedTokens;
  }
  saveTokens(tokens: OAuthTokens) {
    this.storedTokens = tokens;
    this.tokenHistory.push(tokens);
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** Listens on http://localhost:<port>/callback and hands over the query of the first visit. */
export async function callbackListener() {
  const port = await freePort();
  let resolveQuery: (query: URLSearchParams) => void;
  const received = new Promise<URLSearchParams>((resolve) => (resolveQuery = resolve));
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", `http://localhost:${port}`);
    if (url.pathname === "/callback") resolveQuery(url.searchParams);
    response.writeHead(200, { "Content-Type": "text/plain" }).end("You can close this window.");
  });
  await new Promise<void>((resolve) => server.listen(port, "localhost", resolve));
  server.unref(); // a test that fails before close() must not keep the process alive
  // Chromium keeps connections open, and preconnects sockets that never carry a
  // request; server.close() would wait for all of them.
  const sockets = new Set<import("node:net").Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
  return { url: `http://localhost:${port}/callback`, received, close };
}

function mcpTransport(baseUrl: string, provider: OAuthClientProvider) {
  return new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { authProvider: provider });
}

/**
 * Connects; when the server answers 401 the SDK discovers, registers and calls
 * redirectToAuthorization, and this returns null so the test can play the person.
 */
export async function connectOrAuthorize(baseUrl: string, provider: OAuthClientProvider): Promise<Client | null> {
  const client = new Client({ name: "e2e-agent", version: "1.0.0" });
  try {
    await client.connect(mcpTransport(baseUrl, provider));
    return client;
  } catch (error) {
    if (error instanceof UnauthorizedError) return null;
    throw error;
  }
}

/** Finishes the flow with the code the callback received, then connects for real. */
export async function finishAndConnect(baseUrl: string, provider: OAuthClientProvider, code: string): Promise<Client> {
  const transport = mcpTransport(baseUrl, provider);
  await transport.finishAuth(code);
  const client = new Client({ name: "e2e-agent", version: "1.0.0" });
  await client.connect(mcpTransport(baseUrl, provider));
  return client;
}

/** A client holding a fixed bearer (a personal API key), no OAuth. */
export async function connectWithBearer(baseUrl: string, bearer: string, capabilities: ClientCapabilities = {}): Promise<Client> {
  const client = new Client({ name: "e2e-script", version: "1.0.0" }, { capabilities });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${bearer}` } } }),
  );
  return client;
}

/** What a modern client's elicitation handler was asked, and how it answered. */
export type UrlElicitation = { url: string; message: string };

/**
 * A 2026-07-28 client (the SDK's v2, negotiating with server/discover) holding a fixed bearer. With
 * `onUrlElicitation` it declares URL-mode elicitation and answers through it, as a host that opens the
 * browser would; without, it declares no elicitation at all.
 */
export async function connectModern(
  baseUrl: string,
  bearer: string,
  options: { onUrlElicitation?: (request: UrlElicitation) => Promise<"accept" | "decline" | "cancel">; manual?: boolean } = {},
): Promise<ModernClient> {
  const client = new ModernClient(
    { name: "e2e-modern-agent", version: "1.0.0" },
    {
      versionNegotiation: { mode: { pin: "2026-07-28" } },
      capabilities: options.onUrlElicitation ? { elicitation: { url: {} } } : {},
      ...(options.manual ? { inputRequired: { autoFulfill: false } } : {}),
    },
  );
  const answer = options.onUrlElicitation;
  if (answer) {
    client.setRequestHandler("elicitation/create", async (request) => {
      const params = request.params as { mode?: string; url?: string; message: string };
      if (params.mode !== "url" || !params.url) return { action: "decline" };
      return { action: await answer({ url: params.url, message: params.message }) };
    });
  }
  await client.connect(new ModernTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${bearer}` } } }));
  return client;
}
