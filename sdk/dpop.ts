// RFC 9449 DPoP proofs, made with WebCrypto so this runs in Node and browsers: a client holding a key sends one
// proof with each token request and each /mcp call, and its tokens are worth nothing to whoever copies them
// without the key.
import { base64url } from "./base64url";

/** A key to prove possession of: a WebCrypto key pair (ECDSA P-256, Ed25519 or RSASSA-PKCS1-v1_5 SHA-256), or a private JWK. */
export type DpopKey = CryptoKeyPair | JsonWebKey;

/** A key ready to sign proofs: its private key, the JWS alg and the public JWK every proof carries. */
export type DpopSigner = { privateKey: CryptoKey; alg: "ES256" | "EdDSA" | "RS256"; publicJwk: JsonWebKey };

/** The members of a JWK that only its private part has. */
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"] as const;

const utf8 = (text: string) => new TextEncoder().encode(text);
const base64urlJson = (value: object) => base64url(utf8(JSON.stringify(value)));

/** A new ES256 key pair (P-256), its private key not extractable. */
export function generateDpopKey(): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign", "verify"]);
}

/** A new ES256 key as a private JWK, for a client that stores it (the CLI keeps it in a file of mode 0600). */
export async function generateDpopJwk(): Promise<JsonWebKey> {
  const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
  return crypto.subtle.exportKey("jwk", pair.privateKey);
}

type Algorithm = {
  alg: DpopSigner["alg"];
  import: EcKeyImportParams | RsaHashedImportParams | { name: "Ed25519" };
  sign: AlgorithmIdentifier | EcdsaParams;
};

const ES256: Algorithm = { alg: "ES256", import: { name: "ECDSA", namedCurve: "P-256" }, sign: { name: "ECDSA", hash: "SHA-256" } };
const EDDSA: Algorithm = { alg: "EdDSA", import: { name: "Ed25519" }, sign: { name: "Ed25519" } };
const RS256: Algorithm = { alg: "RS256", import: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, sign: { name: "RSASSA-PKCS1-v1_5" } };
const BY_ALG = { ES256, EdDSA: EDDSA, RS256 } as const;

function algorithmOfJwk(jwk: JsonWebKey): Algorithm {
  if (jwk.kty === "EC" && jwk.crv === "P-256") return ES256;
  if (jwk.kty === "OKP" && jwk.crv === "Ed25519") return EDDSA;
  if (jwk.kty === "RSA") return RS256;
  throw new TypeError("a DPoP key must be EC P-256, Ed25519 or RSA");
}

function algorithmOfKey(key: CryptoKey): Algorithm {
  const { name } = key.algorithm;
  if (name === "ECDSA" && (key.algorithm as EcKeyAlgorithm).namedCurve === "P-256") return ES256;
  if (name === "Ed25519") return EDDSA;
  if (name === "RSASSA-PKCS1-v1_5" && (key.algorithm as RsaHashedKeyAlgorithm).hash.name === "SHA-256") return RS256;
  throw new TypeError("a DPoP key must be ECDSA P-256, Ed25519 or RSASSA-PKCS1-v1_5 with SHA-256");
}

/** The public members of a JWK only: what a proof's header may carry. */
function publicPart(jwk: JsonWebKey): JsonWebKey {
  const copy: Record<string, unknown> = { ...jwk };
  for (const member of [...PRIVATE_MEMBERS, "key_ops", "ext", "alg", "use"]) delete copy[member];
  return copy as JsonWebKey;
}

/** Prepares a key for signing proofs (a signer already prepared is returned as it is). */
export async function dpopSigner(key: DpopKey | DpopSigner): Promise<DpopSigner> {
  if ("publicJwk" in key) return key;
  if ("privateKey" in key && "publicKey" in key) {
    const algorithm = algorithmOfKey(key.privateKey);
    return { privateKey: key.privateKey, alg: algorithm.alg, publicJwk: publicPart(await crypto.subtle.exportKey("jwk", key.publicKey)) };
  }
  const jwk = key as JsonWebKey;
  if (typeof jwk.d !== "string") throw new TypeError("a DPoP key given as a JWK must be its private key");
  const algorithm = algorithmOfJwk(jwk);
  const privateKey = await crypto.subtle.importKey("jwk", { ...jwk, key_ops: ["sign"] }, algorithm.import, false, ["sign"]);
  return { privateKey, alg: algorithm.alg, publicJwk: publicPart(jwk) };
}

/** SHA-256 of an access token, base64url: a proof's `ath` at a resource. */
async function tokenHash(accessToken: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", utf8(accessToken))));
}

/** One proof (RFC 9449 §4.2) for a request of `method` to `url`, with the `ath` of `accessToken` when one is sent. */
export async function dpopProof(signer: DpopSigner, method: string, url: string, accessToken?: string): Promise<string> {
  const target = new URL(url);
  target.search = "";
  target.hash = "";
  const header = { typ: "dpop+jwt", alg: signer.alg, jwk: signer.publicJwk };
  const payload = {
    jti: base64url(crypto.getRandomValues(new Uint8Array(16))),
    htm: method,
    htu: target.href,
    iat: Math.floor(Date.now() / 1000),
    ...(accessToken !== undefined ? { ath: await tokenHash(accessToken) } : {}),
  };
  const signingInput = `${base64urlJson(header)}.${base64urlJson(payload)}`;
  const signature = await crypto.subtle.sign(BY_ALG[signer.alg].sign, signer.privateKey, utf8(signingInput));
  return `${signingInput}.${base64url(new Uint8Array(signature))}`;
}
