import { createHash, randomBytes, randomFillSync, timingSafeEqual } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A random opaque secret: 32 bytes (256 bits), base64url. */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

// Identifiers are cut from random bytes drawn 4 KiB at a time: a call into the CSPRNG per identifier cost about 2 % of
// an x402 payment's CPU (it makes several). No byte is handed out twice.
const idBytes = Buffer.alloc(4096);
let idOffset = idBytes.length;

/** A random identifier that is not a secret (ids in URLs and tables): 128 random bits. */
export function randomId(prefix = ""): string {
  if (idOffset === idBytes.length) {
    randomFillSync(idBytes);
    idOffset = 0;
  }
  const id = idBytes.toString("base64url", idOffset, idOffset + 16);
  idOffset += 16;
  return `${prefix}${id}`;
}

/**
 * `length` base62 characters, uniformly distributed (rejection sampling keeps
 * every character equally likely). 43 characters carry 256 bits.
 */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** SHA-256 of a secret, hex: how codes, tokens and keys are stored. */
export function sha256Hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

export function sha256Base64Url(value: string): string {
  return createHash("sha256").update(value).digest("base64url");
}

/** Constant-time equality of two strings (false when lengths differ). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** What JSON.stringify would encode for a value with toJSON (a Date: its ISO string). */
export function jsonValue(value: unknown): unknown {
  const toJSON = value && typeof value === "object" ? (value as { toJSON?: unknown }).toJSON : undefined;
  return typeof toJSON === "function" ? (toJSON as () => unknown).call(value) : value;
}

/** JSON with object keys sorted at every level: one encoding per value, so hashes and signed challenges are stable. */
export function canonicalJson(input: unknown): string {
  const value = jsonValue(input);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, inner]) => inner !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${canonicalJson(inner)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}
