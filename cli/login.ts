// `agent-wallet login`: the OAuth device authorization grant (RFC 8628). The CLI shows a short code, a short URL
// and a QR code of the URL with the code in it; the person signs in and approves with a passkey on any device
// (this computer's browser opens at it unless --no-browser), and the CLI polls until the answer comes. It
// registers itself by RFC 7591 as "Agent Wallet CLI" once per service and reuses that registration.
import { spawn } from "node:child_process";
import QRCode from "qrcode";
import {
  DEVICE_CODE_GRANT_TYPE,
  discover,
  dpopSigner,
  generateDpopJwk,
  OAuthError,
  pollDeviceToken,
  register,
  SDK_VERSION,
  startDeviceAuthorization,
  type DeviceAuthorization,
  type Discovery,
} from "../sdk";
import { forgetRegisteredClient, loadRegisteredClient, saveRegisteredClient, saveSession, type StoredSession } from "./config";

export const CLIENT_NAME = "Agent Wallet CLI";

export class LoginError extends Error {}

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

/** The URL as a QR code of block characters, for a phone's camera. */
function terminalQr(url: string): Promise<string> {
  return QRCode.toString(url, { type: "terminal", small: true });
}

export type LoginOptions = {
  baseUrl: string;
  openBrowser: boolean;
  /** where the code, the URL and progress go (stdout for people, stderr with --json) */
  say: (line: string) => void;
  /** shown while waiting (a spinner); stopped before login returns or throws */
  waiting: { start: (text: string) => void; stop: () => void };
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
};

/** This CLI's registration at the service: the stored one, else a new one (remembered for the next login). */
async function clientIdFor(discovery: Discovery, options: LoginOptions): Promise<string> {
  const known = loadRegisteredClient(options.baseUrl, options.env);
  if (known) return known;
  const client = await register(
    discovery,
    {
      client_name: CLIENT_NAME,
      redirect_uris: [],
      token_endpoint_auth_method: "none",
      grant_types: [DEVICE_CODE_GRANT_TYPE, "refresh_token"],
      response_types: [],
      scope: "mcp offline_access",
      software_id: "agent-wallet-cli",
      software_version: SDK_VERSION,
    },
    { signal: options.signal },
  );
  saveRegisteredClient(options.baseUrl, client.client_id, options.env);
  return client.client_id;
}

/** A device sign-in under the stored registration; one the service no longer knows (swept, revoked) is replaced once. */
async function start(discovery: Discovery, options: LoginOptions): Promise<{ clientId: string; authorization: DeviceAuthorization }> {
  for (let attempt = 1; ; attempt++) {
    const clientId = await clientIdFor(discovery, options);
    try {
      return { clientId, authorization: await startDeviceAuthorization({ discovery, clientId }, { signal: options.signal }) };
    } catch (error) {
      const stale = error instanceof OAuthError && (error.code === "invalid_client" || error.code === "unauthorized_client");
      if (!stale || attempt > 1) throw error;
      forgetRegisteredClient(options.baseUrl, options.env);
    }
  }
}

export async function login(options: LoginOptions): Promise<StoredSession> {
  const discovery = await discover(options.baseUrl, { signal: options.signal });
  if (!discovery.deviceAuthorizationEndpoint) throw new LoginError(`${options.baseUrl} does not offer sign-in with a code`);
  const { clientId, authorization } = await start(discovery, options);
  const link = authorization.verification_uri_complete ?? authorization.verification_uri;
  options.say(`To sign in, open this address on any device and enter the code ${authorization.user_code}:`);
  options.say("");
  options.say(authorization.verification_uri);
  options.say("");
  options.say("Or scan this code with your phone:");
  options.say("");
  options.say(await terminalQr(link));
  if (options.openBrowser && openBrowser(link)) options.say("(Opening your browser…)");
  options.waiting.start(`Waiting for your approval (code ${authorization.user_code})`);
  // A key of this login's own, which the tokens are bound to: a copy of the tokens alone calls nothing.
  const dpopKey = await generateDpopJwk();
  let tokens;
  try {
    tokens = await pollDeviceToken(
      { tokenEndpoint: discovery.tokenEndpoint, clientId, authorization, resource: discovery.resource, dpopKey: await dpopSigner(dpopKey) },
      { signal: options.signal },
    );
  } finally {
    options.waiting.stop();
  }
  const session: StoredSession = {
    baseUrl: options.baseUrl,
    clientId,
    resource: discovery.resource,
    tokenEndpoint: discovery.tokenEndpoint,
    tokens,
    dpopKey,
    savedAt: new Date().toISOString(),
  };
  saveSession(session, options.env);
  return session;
}
