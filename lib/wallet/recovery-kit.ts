// A recovery kit: a wallet key encrypted under a passphrase the person chooses, so losing
// every passkey does not lose the funds. Browser-safe (WebCrypto and @noble/hashes); the
// server never sees a kit. scrypt makes each passphrase guess cost memory (N·r·128 bytes = 64 MiB), and a kit that
// asks for more than SCRYPT_BOUNDS is refused before any of it is spent.
import { scryptAsync } from "@noble/hashes/scrypt";
import { privateKeyToAccount } from "viem/accounts";
import { fromBase64Url, toBase64Url } from "./seal";

const RECOVERY_KIT_VERSION = 1;
export const MIN_PASSPHRASE_LENGTH = 12;
/** scrypt parameters of new kits: N = 2^16, r = 8, p = 1 (64 MiB, about a second in a browser). */
const SCRYPT_PARAMS = { N: 2 ** 16, r: 8, p: 1, dkLen: 32 };

/**
 * The most a kit may ask of the browser that opens it: N a power of two up to 2^17 and r up to 8 (at most 128 MiB),
 * p up to 4, and N·r·p at most 2^20 (twice the work of a new kit, a few seconds). A kit is a file anyone can hand
 * the person; one that asked for 2^20 and 16 would take 2 GiB and minutes before the passphrase could be checked.
 */
export const SCRYPT_BOUNDS = { maxN: 2 ** 17, maxR: 8, maxP: 4, maxWork: 2 ** 20 };
/** scrypt's own guard (it refuses to allocate more), set to the bound above plus its small buffers. */
const SCRYPT_MAXMEM = 128 * SCRYPT_BOUNDS.maxN * SCRYPT_BOUNDS.maxR + 1024 * 1024;

export type RecoveryKit = {
  format: "agent-wallet-recovery-kit";
  version: number;
  address: string;
  kdf: "scrypt";
  params: { N: number; r: number; p: number; dkLen: number };
  salt: string;
  iv: string;
  ciphertext: string;
};

export class RecoveryKitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RecoveryKitError";
  }
}

async function kitKey(passphrase: string, salt: Uint8Array, params: RecoveryKit["params"]): Promise<CryptoKey> {
  const bytes = await scryptAsync(passphrase.normalize("NFKC"), salt, { ...params, maxmem: SCRYPT_MAXMEM });
  try {
    return await crypto.subtle.importKey("raw", new Uint8Array(bytes), "AES-GCM", false, ["encrypt", "decrypt"]);
  } finally {
    bytes.fill(0);
  }
}

/** The additional data binds the ciphertext to the kit's version, KDF parameters and address. */
function kitAad(kit: Omit<RecoveryKit, "iv" | "ciphertext">): Uint8Array<ArrayBuffer> {
  const { N, r, p, dkLen } = kit.params;
  return new TextEncoder().encode(
    `${kit.format}:v${kit.version}:${kit.kdf}:${N}:${r}:${p}:${dkLen}:${kit.salt}:${kit.address.toLowerCase()}`,
  );
}

function keyBytes(privateKey: `0x${string}`): Uint8Array<ArrayBuffer> {
  return new Uint8Array(
    privateKey
      .slice(2)
      .match(/../g)!
      .map((pair) => parseInt(pair, 16)),
  );
}

export function passphraseProblem(passphrase: string, confirmation: string): string | null {
  if (passphrase.length < MIN_PASSPHRASE_LENGTH) return `The passphrase needs at least ${MIN_PASSPHRASE_LENGTH} characters`;
  if (passphrase !== confirmation) return "The passphrases do not match";
  return null;
}

export async function createRecoveryKit(privateKey: `0x${string}`, passphrase: string): Promise<RecoveryKit> {
  if (passphrase.length < MIN_PASSPHRASE_LENGTH)
    throw new RecoveryKitError(`The passphrase needs at least ${MIN_PASSPHRASE_LENGTH} characters`);
  const header = {
    format: "agent-wallet-recovery-kit" as const,
    version: RECOVERY_KIT_VERSION,
    address: privateKeyToAccount(privateKey).address,
    kdf: "scrypt" as const,
    params: SCRYPT_PARAMS,
    salt: toBase64Url(crypto.getRandomValues(new Uint8Array(32))),
  };
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const key = await kitKey(passphrase, fromBase64Url(header.salt), header.params);
  const ciphertext = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: kitAad(header) }, key, keyBytes(privateKey));
  return { ...header, iv: toBase64Url(iv), ciphertext: toBase64Url(new Uint8Array(ciphertext)) };
}

/** Checks a parsed file's shape before any work, and that its scrypt parameters are within SCRYPT_BOUNDS. */
function parseKit(value: unknown): RecoveryKit {
  const kit = value as Partial<RecoveryKit> | null;
  if (!kit || typeof kit !== "object" || kit.format !== "agent-wallet-recovery-kit")
    throw new RecoveryKitError("This file is not a recovery kit");
  if (kit.version !== RECOVERY_KIT_VERSION) throw new RecoveryKitError(`Unknown recovery kit version: ${String(kit.version)}`);
  const params = kit.params;
  const sane =
    kit.kdf === "scrypt" &&
    !!params &&
    [params.N, params.r, params.p, params.dkLen].every(Number.isSafeInteger) &&
    params.N >= 2 ** 14 &&
    (params.N & (params.N - 1)) === 0 &&
    params.r >= 1 &&
    params.p >= 1 &&
    params.dkLen === 32 &&
    typeof kit.address === "string" &&
    /^0x[0-9a-fA-F]{40}$/.test(kit.address) &&
    [kit.salt, kit.iv, kit.ciphertext].every((field) => typeof field === "string" && /^[A-Za-z0-9_-]+$/.test(field));
  if (!sane) throw new RecoveryKitError("This recovery kit is damaged");
  const { N, r, p } = params;
  const { maxN, maxR, maxP, maxWork } = SCRYPT_BOUNDS;
  if (N > maxN || r > maxR || p > maxP || N * r * p > maxWork)
    throw new RecoveryKitError(
      `This recovery kit asks for more work than a kit may (scrypt N = ${N}, r = ${r}, p = ${p}; at most N = ${maxN}, ` +
        `r = ${maxR}, p = ${maxP} and N·r·p = ${maxWork}), so it was not opened: Agent Wallet does not write such kits`,
    );
  return kit as RecoveryKit;
}

/** Decrypts a kit (a parsed JSON value); throws RecoveryKitError on a wrong passphrase or a damaged kit. */
export async function openRecoveryKit(value: unknown, passphrase: string): Promise<{ privateKey: `0x${string}`; address: string }> {
  const kit = parseKit(value);
  const key = await kitKey(passphrase, fromBase64Url(kit.salt), kit.params);
  let plain: ArrayBuffer;
  try {
    plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: fromBase64Url(kit.iv), additionalData: kitAad(kit) },
      key,
      fromBase64Url(kit.ciphertext),
    );
  } catch {
    throw new RecoveryKitError("Wrong passphrase, or the recovery kit was changed");
  }
  const bytes = new Uint8Array(plain);
  const privateKey = `0x${Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")}` as `0x${string}`;
  bytes.fill(0);
  const address = privateKeyToAccount(privateKey).address;
  if (address.toLowerCase() !== kit.address.toLowerCase())
    throw new RecoveryKitError("The key in this recovery kit does not match its address");
  return { privateKey, address };
}
