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
  const file = path.join(dir, FILE);
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as Secrets;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const fresh: Secrets = {
    jwtKeys: [{ kid: `k${Date.now().toString(36)}`, secret: randomBytes(32).toString("base64url") }],
    sessionSecret: randomBytes(32).toString("base64url"),
  };
  fs.mkdirSync(dir, { recursive: true });
  const draft = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  fs.writeFileSync(draft, JSON.stringify(fresh, null, 2), { mode: 0o600 });
  try {
    // link() is atomic and refuses an existing file: when two processes start at
    // once, exactly one file wins and both read it whole.
    fs.linkSync(draft, file);
    return fresh;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return JSON.parse(fs.readFileSync(file, "utf8")) as Secrets;
  } finally {
    fs.rmSync(draft, { force: true });
  }
}
