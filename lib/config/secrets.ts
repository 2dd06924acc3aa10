import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/**
 * A secret of at least 32 bytes as base64url, from base64url or standard base64 (as `openssl rand -base64 32` prints
 * it, padding and all); null when it is neither or shorter. The one form every consumer then reads.
 */
export function base64urlSecret(value: string): string | null {
  if (!/^(?:[A-Za-z0-9_-]+|[A-Za-z0-9+/]+={0,2})$/.test(value)) return null;
  const secret = value.replace(/=+$/, "").replaceAll("+", "-").replaceAll("/", "_");
  return secret.length >= 43 ? secret : null;
}

/** What a refused secret's message says of the form. */
export const SECRET_FORM = "a base64url or base64 secret of at least 32 bytes (openssl rand -base64 32)";

export type Secrets = { jwtKeys: { kid: string; secret: string }[]; sessionSecret: string };

const FILE = "secrets.json";

/**
 * The embedded default's secrets, generated once into the data folder (mode 0600).
 * Production sets JWT_SIGNING_KEYS and SESSION_SECRET instead, so that several
 * instances share them.
 */
export function loadOrCreateSecrets(dir: string): Secrets {
  return loadOrCreateJson<Secrets>(dir, FILE, () => ({
    jwtKeys: [{ kid: `k${Date.now().toString(36)}`, secret: randomBytes(32).toString("base64url") }],
    sessionSecret: randomBytes(32).toString("base64url"),
  }));
}

/** A JSON file of generated secrets in the data folder: read it, or write `fresh()` once (mode 0600). */
export function loadOrCreateJson<T>(dir: string, name: string, fresh: () => T): T {
  const file = path.join(dir, name);
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const value = fresh();
  fs.mkdirSync(dir, { recursive: true });
  const draft = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  fs.writeFileSync(draft, JSON.stringify(value, null, 2), { mode: 0o600 });
  try {
    // link() is atomic and refuses an existing file: when two processes start at
    // once, exactly one file wins and both read it whole.
    fs.linkSync(draft, file);
    return value;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return JSON.parse(fs.readFileSync(file, "utf8")) as T;
  } finally {
    fs.rmSync(draft, { force: true });
  }
}
