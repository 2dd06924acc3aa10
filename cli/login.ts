// `agent-wallet login`: the authorization-code flow with PKCE for a native app
// (RFC 8252): a loopback redirect on http://localhost:<port>/callback, the CLI
// registered by RFC 7591 as "Agent Wallet CLI", tokens stored with mode 0600.
import { spawn } from "node:child_process";
import http from "node:http";
import type net from "node:net";
import readline from "node:readline";
import QRCode from "qrcode";
import { buildAuthorizationUrl, discover, exchangeCode, parseCallback, register, SDK_VERSION, type TokenSet } from "../sdk";
import { saveSession, type StoredSession } from "./config";

export const CLIENT_NAME = "Agent Wallet CLI";

export class LoginError extends Error {}

type Callback = { redirectUri: string; received: Promise<URLSearchParams>; close: () => Promise<void> };

const PAGE = (title: string, text: string) =>
  `<!doctype html><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${title}</title>` +
  `<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem"><h1>${title}</h1><p>${text}</p></body>`;

/** Listens on localhost (IPv4 and, when available, IPv6 on the same port) for the one callback carrying our state. */
async function listenForCallback(port: number, state: string): Promise<Callback> {
  let resolveQuery!: (query: URLSearchParams) => void;
  const received = new Promise<URLSearchParams>((resolve) => (resolveQuery = resolve));
  const sockets = new Set<net.Socket>();
  const handler: http.RequestListener = (request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    if (url.pathname !== "/callback") {
      response.writeHead(404, { "Content-Type": "text/plain" }).end("Not found");
      return;
    }
    // A visit without our state is not our answer (maybe forged): keep waiting.
    if (url.searchParams.get("state") !== state) {
      response
        .writeHead(400, { "Content-Type": "text/html; charset=utf-8" })
        .end(PAGE("Unexpected sign-in response", "This does not answer the sign-in the terminal started."));
      return;
    }
    const failed = url.searchParams.get("error");
    response
      .writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" })
      .end(
        failed
          ? PAGE("Sign-in did not finish", "Return to the terminal for details.")
          : PAGE("Signed in", "You can close this window and return to the terminal."),
      );
    resolveQuery(url.searchParams);
  };
  const servers: http.Server[] = [];
  const listen = (host: string, onPort: number) =>
    new Promise<http.Server>((resolve, reject) => {
      const server = http.createServer(handler);
      server.on("connection", (socket) => {
        sockets.add(socket);
        socket.once("close", () => sockets.delete(socket));
      });
      server.once("error", reject);
      server.listen(onPort, host, () => resolve(server));
    });
  const first = await listen("127.0.0.1", port).catch((error: NodeJS.ErrnoException) => {
    throw new LoginError(
      error.code === "EADDRINUSE" ? `Port ${port} is in use: pick another with --port` : `Cannot listen for the callback: ${error.message}`,
    );
  });
  servers.push(first);
  const actualPort = (first.address() as net.AddressInfo).port;
  try {
    servers.push(await listen("::1", actualPort));
  } catch {
    // no IPv6 loopback here: 127.0.0.1 is enough
  }
  return {
    redirectUri: `http://localhost:${actualPort}/callback`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        let open = servers.length;
        for (const server of servers) server.close(() => --open === 0 && resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

function openBrowser(url: string): boolean {
  const [command, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", url.replace(/&/g, "^&")]]
        : ["xdg-open", [url]];
  try {
    const child = spawn(command, args as string[], { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
}

/**
 * Sign-in on another device (the QR code): that device's browser cannot reach this computer's loopback
 * callback, so the person pastes the address it was sent to (it carries the code and our state) here.
 */
function pastedCallback(input: NodeJS.ReadableStream, state: string): { received: Promise<URLSearchParams>; stop: () => void } {
  const lines = readline.createInterface({ input, terminal: false });
  const received = new Promise<URLSearchParams>((resolve) =>
    lines.on("line", (line) => {
      const query = URL.canParse(line.trim()) ? new URL(line.trim()).searchParams : undefined;
      if (query?.get("state") === state) resolve(query);
    }),
  );
  return { received, stop: () => lines.close() };
}

/** The URL as a QR code of block characters, for a phone's camera. */
function terminalQr(url: string): Promise<string> {
  return QRCode.toString(url, { type: "terminal", small: true });
}

export type LoginOptions = {
  baseUrl: string;
  port: number;
  openBrowser: boolean;
  timeoutSeconds: number;
  /** where the URL and progress go (stdout for people, stderr with --json) */
  say: (line: string) => void;
  /** where a person signing in on another device pastes the callback address */
  input?: NodeJS.ReadableStream;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
};

export async function login(options: LoginOptions): Promise<StoredSession> {
  const discovery = await discover(options.baseUrl, { signal: options.signal });
  // The state is chosen first so the listener can tell our callback from any other visit.
  const draft = await buildAuthorizationUrl({ discovery, clientId: "-", redirectUri: "http://localhost/callback" });
  const callback = await listenForCallback(options.port, draft.state);
  try {
    const client = await register(
      discovery,
      {
        client_name: CLIENT_NAME,
        redirect_uris: [callback.redirectUri],
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        scope: "mcp offline_access",
        software_id: "agent-wallet-cli",
        software_version: SDK_VERSION,
      },
      { signal: options.signal },
    );
    const authorization = await buildAuthorizationUrl({
      discovery,
      clientId: client.client_id,
      redirectUri: callback.redirectUri,
      scope: "mcp offline_access",
      state: draft.state,
      codeVerifier: draft.codeVerifier,
    });
    options.say("Open this URL in your browser to sign in and choose what to grant:");
    options.say("");
    options.say(`  ${authorization.url}`);
    options.say("");
    options.say("Or scan this code to sign in on your phone:");
    options.say("");
    options.say(await terminalQr(authorization.url));
    options.say(`On another device, the last page cannot load (it is ${callback.redirectUri}): paste its address here.`);
    if (options.openBrowser && openBrowser(authorization.url)) options.say("(Opening your browser…)");
    options.say(`Waiting for the approval on ${callback.redirectUri} …`);
    const pasted = options.input ? pastedCallback(options.input, authorization.state) : undefined;

    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new LoginError(`No answer from the browser within ${options.timeoutSeconds} s`)),
        options.timeoutSeconds * 1000,
      );
    });
    const aborted = new Promise<never>((_, reject) =>
      options.signal?.addEventListener("abort", () => reject(options.signal!.reason), { once: true }),
    );
    let query: URLSearchParams;
    try {
      query = await Promise.race([callback.received, ...(pasted ? [pasted.received] : []), timedOut, aborted]);
    } finally {
      clearTimeout(timer);
      pasted?.stop();
    }
    const code = parseCallback(query, { state: authorization.state, issuer: discovery.issuer });
    const tokens: TokenSet = await exchangeCode(
      {
        tokenEndpoint: discovery.tokenEndpoint,
        clientId: client.client_id,
        code,
        redirectUri: callback.redirectUri,
        codeVerifier: authorization.codeVerifier,
      },
      { signal: options.signal },
    );
    const session: StoredSession = {
      baseUrl: options.baseUrl,
      clientId: client.client_id,
      resource: discovery.resource,
      tokenEndpoint: discovery.tokenEndpoint,
      tokens,
      savedAt: new Date().toISOString(),
    };
    saveSession(session, options.env);
    return session;
  } finally {
    await callback.close();
  }
}
