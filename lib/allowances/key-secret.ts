// ALLOWANCE_KEY_SECRET, and the delegate key's seal under it: AES-256-GCM under HKDF-SHA-256 of a secret, the key's
// address as AAD. A module of its own, without viem, so that the production server checks the setting before Next
// loads (server.ts) without a second copy of viem in its memory.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { config, ConfigError } from "@/lib/config";
import { databaseUrl, isPostgres } from "@/lib/config/database";
import { base64urlSecret, loadOrCreateJson, SECRET_FORM } from "@/lib/config/secrets";

/** One secret; `kid` null for a plain one, whose seals name no kid (every seal made before kids existed). */
export type KeySecret = { kid: string | null; secret: string };

const PAIR = /^([A-Za-z0-9_-]{1,64}):(.+)$/;

/**
 * A plain secret, or `kid:secret` pairs separated by commas (like JWT_SIGNING_KEYS), each secret as base64url (given
 * as base64url or standard base64); null when it is neither.
 */
function parsed(value: string): KeySecret[] | null {
  const plain = base64urlSecret(value);
  if (plain) return [{ kid: null, secret: plain }];
  const pairs = value
    .split(",")
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => PAIR.exec(pair));
  if (!pairs.length || pairs.some((pair) => !pair)) return null;
  const secrets = pairs.map((pair) => ({ kid: pair![1], secret: base64urlSecret(pair![2]) }));
  if (secrets.some((secret) => !secret.secret)) return null;
  return new Set(secrets.map((secret) => secret.kid)).size === secrets.length ? (secrets as KeySecret[]) : null;
}

/**
 * ALLOWANCE_KEY_SECRET's secrets, the sealing one first, or null when unset; a ConfigError naming it when it is
 * invalid, or unset on PostgreSQL.
 */
export function keySecretsFrom(env: Record<string, string | undefined>): KeySecret[] | null {
  const invalid = (problem: string) => new ConfigError(`Invalid configuration:\n  ALLOWANCE_KEY_SECRET: ${problem}`);
  const value = env.ALLOWANCE_KEY_SECRET;
  if (!value) {
    if (!isPostgres(databaseUrl(env))) return null;
    throw invalid(
      "must be set on PostgreSQL: every instance unseals the one delegate key in the shared database with it, so they " +
        "must all share it (a secret generated into each one's data folder would differ)",
    );
  }
  const secrets = parsed(value);
  if (!secrets) throw invalid(`must be ${SECRET_FORM}, or kid:secret pairs separated by commas, each kid once`);
  return secrets;
}

let cached: KeySecret[] | undefined;

function keySecrets(): KeySecret[] {
  // Unset on SQLite: like the other secrets, generated once into the data folder.
  cached ??= keySecretsFrom(process.env) ?? [
    {
      kid: null,
      secret: loadOrCreateJson(config().dataDir, "allowance-key-secret.json", () => ({ secret: randomBytes(32).toString("base64url") }))
        .secret,
    },
  ];
  return cached;
}

function sealingKey({ secret }: KeySecret): Buffer {
  return Buffer.from(hkdfSync("sha256", Buffer.from(secret), Buffer.alloc(0), "agent-wallet delegate key v1", 32));
}

/** `privateKey` sealed under the first secret: base64url(iv ‖ ciphertext ‖ tag), after `kid.` when it has a kid. */
export function sealDelegateKey(privateKey: string, address: string, secrets = keySecrets()): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", sealingKey(secrets[0]), iv);
  cipher.setAAD(Buffer.from(address.toLowerCase()));
  const body = Buffer.concat([iv, cipher.update(privateKey, "utf8"), cipher.final(), cipher.getAuthTag()]).toString("base64url");
  return secrets[0].kid === null ? body : `${secrets[0].kid}.${body}`;
}

function opened(bytes: Buffer, address: string, secret: KeySecret): `0x${string}` | null {
  try {
    const decipher = createDecipheriv("aes-256-gcm", sealingKey(secret), bytes.subarray(0, 12));
    decipher.setAAD(Buffer.from(address.toLowerCase()));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString("utf8") as `0x${string}`;
  } catch {
    return null;
  }
}

/**
 * The sealed private key, and whether the first secret sealed it (else the caller seals it again under that one). A
 * ConfigError naming ALLOWANCE_KEY_SECRET (never a secret) when no configured secret opens it.
 */
export function unsealDelegateKey(
  sealed: string,
  address: string,
  secrets = keySecrets(),
): { privateKey: `0x${string}`; current: boolean } {
  // base64url has no dot: one marks the kid that sealed it. Its secret is tried first, then the others (GCM's tag
  // tells), so that a seal made before kids, or under a secret since given another kid, still opens.
  const [kid, body] = sealed.includes(".") ? sealed.split(".", 2) : [null, sealed];
  const bytes = Buffer.from(body, "base64url");
  for (const secret of [...secrets].sort((a, b) => Number(b.kid === kid) - Number(a.kid === kid))) {
    const privateKey = opened(bytes, address, secret);
    if (privateKey) return { privateKey, current: secret === secrets[0] };
  }
  const sealer = kid === null ? "a secret without a kid" : `the kid ${kid}`;
  throw new ConfigError(
    `The delegate key was sealed under ${sealer}, and no secret in ALLOWANCE_KEY_SECRET opens it: ` +
      "set the secret that sealed it (second, after the new one, when rotating; docs/operations.md)",
  );
}
