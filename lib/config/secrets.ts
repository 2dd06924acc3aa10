import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

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
