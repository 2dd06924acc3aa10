// The stored session: {baseUrl, clientId, tokens, dpopKey} in the user's config folder (and the CLI's registration per
// service in clients.json),
// the folder mode 0700 and the file 0600, written atomically. A lock file
// serialises refreshes between CLI processes sharing the session: a refresh
// token rotates, and presenting a spent one again would revoke the client.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TokenSet } from "../sdk";

export type CliEnvironment = Record<string, string | undefined>;

export type StoredSession = {
  baseUrl: string;
  clientId: string;
  /** the MCP resource and token endpoint found at login, so later commands skip discovery */
  resource?: string;
  tokenEndpoint?: string;
  tokens: TokenSet;
  /**
   * The ES256 private key (a JWK) made at login, which the tokens are bound to (RFC 9449 DPoP): kept with them, in
   * this file of mode 0600. Absent in a session stored before DPoP: its tokens are bearer tokens.
   */
  dpopKey?: JsonWebKey;
  savedAt: string;
};

export function configDir(env: CliEnvironment = process.env): string {
  if (env.AGENT_WALLET_CONFIG_DIR) return path.resolve(env.AGENT_WALLET_CONFIG_DIR);
  if (env.XDG_CONFIG_HOME) return path.join(path.resolve(env.XDG_CONFIG_HOME), "agent-wallet");
  return path.join(os.homedir(), ".config", "agent-wallet");
}

export function configFile(env: CliEnvironment = process.env): string {
  return path.join(configDir(env), "session.json");
}

export function loadSession(env: CliEnvironment = process.env): StoredSession | undefined {
  let text: string;
  try {
    text = fs.readFileSync(configFile(env), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    const session = JSON.parse(text) as StoredSession;
    if (typeof session?.baseUrl !== "string" || typeof session.clientId !== "string" || typeof session.tokens?.accessToken !== "string")
      return undefined;
    return session;
  } catch {
    return undefined; // a damaged file is as good as none: log in again
  }
}

/** Writes JSON into the config folder (mode 0700) as a file of mode 0600, atomically. */
function writeConfigFile(file: string, value: unknown, env: CliEnvironment): void {
  const dir = configDir(env);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  const temporary = `${file}.${process.pid}.tmp`;
  const handle = fs.openSync(temporary, "w", 0o600);
  try {
    fs.writeFileSync(handle, `${JSON.stringify(value, null, 2)}\n`);
    fs.fsyncSync(handle);
  } finally {
    fs.closeSync(handle);
  }
  fs.chmodSync(temporary, 0o600);
  fs.renameSync(temporary, file);
}

/**
 * The key this CLI spends its own allowances with (request-allowance): made on first use, kept in agent-key.json
 * (mode 0600) apart from the session, so that logging out or in again never loses what an allowance names.
 */
export function agentKeyFile(env: CliEnvironment = process.env): string {
  return path.join(configDir(env), "agent-key.json");
}

export function loadAgentKey(env: CliEnvironment = process.env): `0x${string}` | undefined {
  try {
    const { privateKey } = JSON.parse(fs.readFileSync(agentKeyFile(env), "utf8")) as { privateKey?: unknown };
    return typeof privateKey === "string" && /^0x[0-9a-fA-F]{64}$/.test(privateKey) ? (privateKey as `0x${string}`) : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new Error(`${agentKeyFile(env)} cannot be read as the CLI's key; move it aside only if no allowance names it`);
  }
}

export function saveAgentKey(privateKey: `0x${string}`, address: string, env: CliEnvironment = process.env): void {
  writeConfigFile(agentKeyFile(env), { address, privateKey, createdAt: new Date().toISOString() }, env);
}

export function saveSession(session: StoredSession, env: CliEnvironment = process.env): void {
  writeConfigFile(configFile(env), session, env);
}

/** This CLI's client registration at each service (base URL → client_id): kept across logout, reused by login. */
function clientsFile(env: CliEnvironment): string {
  return path.join(configDir(env), "clients.json");
}

function loadClients(env: CliEnvironment): Record<string, { clientId: string; registeredAt: string }> {
  try {
    const clients = JSON.parse(fs.readFileSync(clientsFile(env), "utf8")) as unknown;
    return clients && typeof clients === "object" && !Array.isArray(clients) ? (clients as ReturnType<typeof loadClients>) : {};
  } catch {
    return {}; // none yet, or damaged: register again
  }
}

export function loadRegisteredClient(baseUrl: string, env: CliEnvironment = process.env): string | undefined {
  const clientId = loadClients(env)[baseUrl]?.clientId;
  return typeof clientId === "string" ? clientId : undefined;
}

export function saveRegisteredClient(baseUrl: string, clientId: string, env: CliEnvironment = process.env): void {
  writeConfigFile(clientsFile(env), { ...loadClients(env), [baseUrl]: { clientId, registeredAt: new Date().toISOString() } }, env);
}

export function forgetRegisteredClient(baseUrl: string, env: CliEnvironment = process.env): void {
  const { [baseUrl]: _forgotten, ...rest } = loadClients(env);
  writeConfigFile(clientsFile(env), rest, env);
}

export function deleteSession(env: CliEnvironment = process.env): boolean {
  try {
    fs.unlinkSync(configFile(env));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
}

const LOCK_STALE_MS = 60_000;

/** Runs `critical` holding <config>/session.lock (waits up to 30 s for another holder; a lock older than 60 s is stale). */
export async function withSessionLock<T>(critical: () => Promise<T>, env: CliEnvironment = process.env): Promise<T> {
  const dir = configDir(env);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const lock = path.join(dir, "session.lock");
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      fs.closeSync(fs.openSync(lock, "wx", 0o600));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      try {
        if (Date.now() - fs.statSync(lock).mtimeMs > LOCK_STALE_MS) fs.unlinkSync(lock);
      } catch {
        // gone meanwhile
      }
      if (Date.now() > deadline) throw new Error(`Another agent-wallet process holds ${lock}; remove it if none is running`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    return await critical();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}
