// Sealing a wallet key under a passkey's PRF output (docs/product.md §1). This module
// runs in the browser (WebCrypto); tests run it in Node, which has the same API.
// The server imports only the format checks: it never holds a PRF output.

const INFO = new TextEncoder().encode("agent-wallet/credential-seal/v1");

export type Seal = { ciphertext: string; iv: string; prfSalt: string };

/** Sizes of a sealed 32-byte key: AES-GCM adds a 16-byte tag; a 12-byte IV; a 32-byte salt. */
export const SEAL_FORMAT = {
  ciphertext: /^[A-Za-z0-9_-]{64}$/,
  iv: /^[A-Za-z0-9_-]{16}$/,
  prfSalt: /^[A-Za-z0-9_-]{43}$/,
};

export function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (text.length % 4)) % 4));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function hexToBytes(hex: string): Uint8Array<ArrayBuffer> {
  const clean = hex.startsWith("0x") ? hex.slice(2) : hex;
  const bytes = new Uint8Array(clean.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(clean.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

function bytesToHex(bytes: Uint8Array): `0x${string}` {
  return `0x${Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")}`;
}

/** A fresh per-credential PRF salt. */
export function newPrfSalt(): Uint8Array<ArrayBuffer> {
  return crypto.getRandomValues(new Uint8Array(32));
}

/** AES-256-GCM key = HKDF-SHA-256(PRF output, salt, info). */
async function sealingKey(prfOutput: BufferSource, salt: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey("raw", prfOutput, "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey({ name: "HKDF", hash: "SHA-256", salt, info: INFO }, material, { name: "AES-GCM", length: 256 }, false, [
    "encrypt",
    "decrypt",
  ]);
}

/** The additional data binds a ciphertext to its credential and address. */
function aad(credentialId: string, address: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(`agent-wallet:${credentialId}:${address.toLowerCase()}`);
}

export async function sealPrivateKey(input: {
  privateKey: string;
  prfOutput: BufferSource;
  salt: Uint8Array<ArrayBuffer>;
  credentialId: string;
  address: string;
}): Promise<Seal> {
  const key = await sealingKey(input.prfOutput, input.salt);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ciphertext = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: aad(input.credentialId, input.address) },
    key,
    hexToBytes(input.privateKey),
  );
  return { ciphertext: toBase64Url(new Uint8Array(ciphertext)), iv: toBase64Url(iv), prfSalt: toBase64Url(input.salt) };
}

/** Decrypts a sealed key; throws when the passkey, credential or address differ. */
export async function unsealPrivateKey(
  input: Seal & { prfOutput: BufferSource; credentialId: string; address: string },
): Promise<`0x${string}`> {
  const key = await sealingKey(input.prfOutput, fromBase64Url(input.prfSalt));
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: fromBase64Url(input.iv), additionalData: aad(input.credentialId, input.address) },
    key,
    fromBase64Url(input.ciphertext),
  );
  return bytesToHex(new Uint8Array(plain));
}
