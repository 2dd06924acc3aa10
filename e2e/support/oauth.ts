// Helpers that act as an OAuth client over HTTP, and as the person approving
// in-process (through lib/oauth, the function the consent screen calls).
import { createHash, randomBytes } from "node:crypto";
import type { RunningApp } from "./app";
import { db } from "@/lib/db";
import { randomId } from "@/lib/crypto";
import { approveAuthorizationRequest } from "@/lib/oauth/consent";
import type { GrantSet } from "@/lib/oauth/grants";
import type { Clock } from "@/lib/clock";

export function pkcePair() {
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  return { verifier, challenge };
}

export type TestClient = { client_id: string; redirect_uris: string[]; client_name: string };

export async function register(app: RunningApp, body: Record<string, unknown> = {}): Promise<TestClient> {
  const response = await fetch(`${app.baseUrl}/oauth/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      client_name: "Test agent",
      redirect_uris: ["http://localhost:8976/callback"],
      token_endpoint_auth_method: "none",
      ...body,
    }),
  });
  if (response.status !== 201) throw new Error(`registration failed: ${response.status} ${await response.text()}`);
  return (await response.json()) as TestClient;
}

/** GET /oauth/authorize without following the redirect. */
export async function authorize(app: RunningApp, params: Record<string, string | undefined>): Promise<Response> {
  const url = new URL(`${app.baseUrl}/oauth/authorize`);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return fetch(url, { redirect: "manual" });
}

/** A valid authorization request; returns the consent request id and the PKCE pair. */
export async function startValidAuthorization(app: RunningApp, client: TestClient, extra: Record<string, string | undefined> = {}) {
  const pkce = pkcePair();
  const response = await authorize(app, {
    response_type: "code",
    client_id: client.client_id,
    redirect_uri: client.redirect_uris[0],
    code_challenge: pkce.challenge,
    code_challenge_method: "S256",
    scope: "mcp",
    resource: `${app.baseUrl}/mcp`,
    state: "st-123",
    ...extra,
  });
  if (response.status !== 302) throw new Error(`authorize answered ${response.status}: ${await response.text()}`);
  const location = new URL(response.headers.get("location")!);
  const requestId = location.searchParams.get("request");
  if (!requestId) throw new Error(`authorize redirected to ${location}`);
  return { requestId, pkce, location };
}

export async function createUser(email = `${randomId()}@example.test`) {
  return db().user.create({ data: { id: randomId("u_"), email } });
}

/** A watch-only credential: enough for a grant set in OAuth tests. */
export async function createWatchCredential(userId: string, name = "Treasury") {
  const address = `0x${randomBytes(20).toString("hex")}`;
  return db().credential.create({ data: { id: randomId("cr_"), userId, name, kind: "evm_watch", address } });
}

/** The person approves in-process; returns the code from the redirect. */
export async function approve(
  requestId: string,
  userId: string,
  credentials: GrantSet = [],
  options: { stayConnected?: boolean; clock?: Clock } = {},
) {
  const decision = await approveAuthorizationRequest(
    { requestId, userId, credentials, stayConnected: options.stayConnected ?? true },
    options.clock,
  );
  const redirect = new URL(decision.location);
  return { code: redirect.searchParams.get("code")!, redirect, grantId: decision.grantId };
}

export async function token(
  app: RunningApp,
  params: Record<string, string | undefined>,
  headers: Record<string, string> = {},
): Promise<Response> {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) body.set(name, value);
  return fetch(`${app.baseUrl}/oauth/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers },
    body,
  });
}

/** The whole flow up to a token response, for tests that start from tokens. */
export async function obtainTokens(
  app: RunningApp,
  options: {
    scope?: string;
    stayConnected?: boolean;
    credentials?: (userId: string) => Promise<GrantSet>;
    client?: TestClient;
    /** a DPoP proof for the code exchange: the tokens are then bound to its key */
    dpop?: () => string;
  } = {},
) {
  const client = options.client ?? (await register(app));
  const user = await createUser();
  const credentials = options.credentials ? await options.credentials(user.id) : [];
  const { requestId, pkce } = await startValidAuthorization(app, client, { scope: options.scope ?? "mcp offline_access" });
  const { code, grantId } = await approve(requestId, user.id, credentials, { stayConnected: options.stayConnected });
  const response = await token(
    app,
    {
      grant_type: "authorization_code",
      client_id: client.client_id,
      code,
      redirect_uri: client.redirect_uris[0],
      code_verifier: pkce.verifier,
    },
    options.dpop ? { DPoP: options.dpop() } : {},
  );
  if (response.status !== 200) throw new Error(`code exchange failed: ${response.status} ${await response.text()}`);
  const tokens = (await response.json()) as {
    access_token: string;
    refresh_token?: string;
    scope: string;
    expires_in: number;
    token_type: string;
  };
  return { client, user, grantId, tokens };
}

/** A grant with one approve-mode signing credential "Main" (no sealed key: for requests nobody approves), at `address` if given. */
export async function signerGrant(app: RunningApp, address = `0x${randomBytes(20).toString("hex")}`) {
  let credentialId = "";
  const flow = await obtainTokens(app, {
    credentials: async (userId) => {
      credentialId = (await db().credential.create({ data: { id: randomId("cr_"), userId, name: "Main", kind: "evm", address } })).id;
      return [{ credentialId, mode: "approve" }];
    },
  });
  return { bearer: flow.tokens.access_token, grantId: flow.grantId, clientId: flow.client.client_id, credentialId };
}

let rpcId = 0;
/** One JSON-RPC call on /mcp (stateless Streamable HTTP, JSON responses). */
export async function mcp(app: RunningApp, bearer: string | null, method: string, params: Record<string, unknown> = {}): Promise<Response> {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
  };
  if (bearer !== null) headers.Authorization = `Bearer ${bearer}`;
  return fetch(`${app.baseUrl}/mcp`, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, method, params }) });
}

export const INITIALIZE_PARAMS = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1.0.0" } };

/** A clock fixed `seconds` away from now (negative: the past). */
export function clockShiftedBy(seconds: number): Clock {
  const at = new Date(Date.now() + seconds * 1000);
  return () => at;
}

/** POST /oauth/token with grant_type authorization_code for this client. */
export async function exchangeCode(
  app: RunningApp,
  client: TestClient,
  code: string,
  verifier: string,
  overrides: Record<string, string | undefined> = {},
): Promise<Response> {
  return token(app, {
    grant_type: "authorization_code",
    client_id: client.client_id,
    code,
    redirect_uri: client.redirect_uris[0],
    code_verifier: verifier,
    ...overrides,
  });
}

/** POST /oauth/token with grant_type refresh_token for this client. */
export async function refreshTokens(
  app: RunningApp,
  client: TestClient,
  refreshToken: string,
  extra: Record<string, string | undefined> = {},
): Promise<Response> {
  return token(app, { grant_type: "refresh_token", client_id: client.client_id, refresh_token: refreshToken, ...extra });
}

/** A registered client, a user and an approved request: the code and its verifier. */
export async function approvedCode(
  app: RunningApp,
  options: { client?: TestClient; scope?: string; stayConnected?: boolean; clock?: Clock; userId?: string } = {},
) {
  const client = options.client ?? (await register(app));
  const userId = options.userId ?? (await createUser()).id;
  const { requestId, pkce } = await startValidAuthorization(app, client, { scope: options.scope ?? "mcp offline_access" });
  const { code, grantId, redirect } = await approve(requestId, userId, [], { stayConnected: options.stayConnected, clock: options.clock });
  return { client, userId, code, verifier: pkce.verifier, grantId, redirect };
}

/** Asserts an OAuth JSON error response: status, `error` code, description present, no-store. */
export async function expectOAuthError(response: Response, status: number, error: string): Promise<Record<string, unknown>> {
  const text = await response.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`expected a JSON ${error} error, got ${response.status}: ${text.slice(0, 300)}`);
  }
  if (response.status !== status || body.error !== error) {
    throw new Error(`expected ${status} ${error}, got ${response.status} ${text.slice(0, 300)}`);
  }
  if (typeof body.error_description !== "string" || !body.error_description) throw new Error(`no error_description in ${text}`);
  if (!/no-store/.test(response.headers.get("cache-control") ?? "")) throw new Error(`no Cache-Control: no-store on ${status} ${error}`);
  if (!/application\/json/.test(response.headers.get("content-type") ?? ""))
    throw new Error(`error is not JSON: ${response.headers.get("content-type")}`);
  return body;
}
