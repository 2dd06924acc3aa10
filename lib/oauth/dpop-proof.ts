// RFC 9449 DPoP proofs, checked as §4.3 lists, without the database: the single use of each proof's jti is
// lib/oauth/dpop-replay.ts. The allowed algorithms are asymmetric only: a proof shows possession of a private key.
import { calculateJwkThumbprint, decodeProtectedHeader, importJWK, jwtVerify, type CryptoKey, type JWK } from "jose";
import { LRUCache } from "lru-cache";
import { sha256Base64Url } from "@/lib/crypto";
import type { Clock } from "@/lib/clock";
import { InvalidDpopProofError } from "./errors";

/** What discovery lists as `dpop_signing_alg_values_supported`; never `none` nor a MAC. */
export const DPOP_ALGORITHMS = ["ES256", "EdDSA", "RS256"] as const;

const PROOF_TYPE = "dpop+jwt";
/** How old a proof's iat may be, and how far ahead of this server's clock (the sender's clock may run fast). */
export const DPOP_PROOF_MAX_AGE_SECONDS = 60;
const DPOP_PROOF_MAX_SKEW_SECONDS = 10;
/** Longer than any credential's proof; refused before any parsing. */
const MAX_PROOF_LENGTH = 4096;
const MAX_JTI_LENGTH = 256;
/** The members of a JWK that only a private (or symmetric) key has. */
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/**
 * Each proof's key, imported once with its thumbprint, by its algorithm and JWK as the header carries them: a client
 * sends the same key with every call, and importing it (jose's EmbeddedJWK does on every verification) and hashing
 * it cost as much as the verification itself on /mcp's path (docs/performance.md). Only what the JWK alone decides
 * is kept; every proof's signature and claims are checked each time. The least recently used of 5,000 makes room.
 */
const keys = new LRUCache<string, Promise<{ key: CryptoKey; jkt: string } | null>>({ max: 5_000 });

function importedKey(alg: string, jwk: JWK): Promise<{ key: CryptoKey; jkt: string } | null> {
  const id = `${alg} ${JSON.stringify(jwk)}`;
  let imported = keys.get(id);
  if (!imported) {
    // RFC 7517 §4.2, §4.4 as jose's EmbeddedJWK checks them: a key meant for something else, or another alg, is no key here.
    const usable = (jwk.use === undefined || jwk.use === "sig") && (jwk.alg === undefined || jwk.alg === alg);
    imported = usable
      ? Promise.all([importJWK(jwk, alg), calculateJwkThumbprint(jwk, "sha256")]).then(
          ([key, jkt]) => (key instanceof Uint8Array || key.type !== "public" ? null : { key, jkt }),
          () => null,
        )
      : Promise.resolve(null);
    keys.set(id, imported);
  }
  return imported;
}

/** An accepted proof: the key's RFC 7638 thumbprint, and what makes it single-use. */
export type CheckedProof = { jkt: string; jti: string; iat: number };

/** The request a proof must be for: its method and URL, and at a resource the access token it accompanies. */
export type ProofTarget = { htm: string; htu: string; accessToken?: string; status?: 400 | 401 };

/** RFC 9449 §4.3 point 9: the URL without query and fragment, after syntax-based normalization (the URL parser's). */
function withoutQuery(url: string): string | null {
  try {
    const parsed = new URL(url);
    parsed.search = "";
    parsed.hash = "";
    return parsed.href;
  } catch {
    return null;
  }
}

/** The `DPoP` header as sent: exactly one (several fields arrive joined by commas, which a JWS never holds). */
export function singleProof(header: string | null, status: 400 | 401 = 400): string | null {
  if (header === null) return null;
  const proof = header.trim();
  if (!proof || proof.includes(",")) throw new InvalidDpopProofError("Send exactly one DPoP header", status);
  if (proof.length > MAX_PROOF_LENGTH)
    throw new InvalidDpopProofError(`A DPoP proof may be at most ${MAX_PROOF_LENGTH} characters`, status);
  return proof;
}

/**
 * Checks a DPoP proof for `target` (RFC 9449 §4.3): typ `dpop+jwt`, an allowed asymmetric alg, a public `jwk` that
 * verifies the signature, a jti, `htm` and `htu` of this request, an iat within the window, and at a resource the
 * `ath` of the access token. Returns the key's thumbprint; the jti is not yet spent.
 */
export async function checkDpopProof(proof: string, target: ProofTarget, clock: Clock): Promise<CheckedProof> {
  const refuse = (why: string) => new InvalidDpopProofError(why, target.status ?? 400);
  let header;
  try {
    header = decodeProtectedHeader(proof);
  } catch {
    throw refuse("The DPoP proof is not a JWS");
  }
  if (header.typ !== PROOF_TYPE) throw refuse(`The DPoP proof's typ must be ${PROOF_TYPE}`);
  if (!(DPOP_ALGORITHMS as readonly unknown[]).includes(header.alg))
    throw refuse(`The DPoP proof's alg must be one of ${DPOP_ALGORITHMS.join(", ")}`);
  const jwk = header.jwk as JWK | undefined;
  if (!jwk || typeof jwk !== "object") throw refuse("The DPoP proof's header carries no jwk");
  if (PRIVATE_MEMBERS.some((member) => member in jwk)) throw refuse("The DPoP proof's jwk must be a public key, without its private part");
  const imported = await importedKey(header.alg as string, jwk);
  if (!imported) throw refuse(`The DPoP proof's jwk is not a public ${header.alg as string} signing key`);
  let payload;
  try {
    ({ payload } = await jwtVerify(proof, imported.key, { typ: PROOF_TYPE, algorithms: [...DPOP_ALGORITHMS] }));
  } catch {
    throw refuse("The DPoP proof's signature does not verify with its jwk");
  }
  const { jti, htm, htu, iat, ath } = payload as Record<string, unknown>;
  if (typeof jti !== "string" || !jti || jti.length > MAX_JTI_LENGTH) throw refuse("The DPoP proof needs a jti");
  if (htm !== target.htm) throw refuse(`The DPoP proof's htm must be ${target.htm}`);
  if (typeof htu !== "string" || withoutQuery(htu) !== withoutQuery(target.htu)) throw refuse(`The DPoP proof's htu must be ${target.htu}`);
  const now = Math.floor(clock().getTime() / 1000);
  if (typeof iat !== "number" || iat < now - DPOP_PROOF_MAX_AGE_SECONDS || iat > now + DPOP_PROOF_MAX_SKEW_SECONDS)
    throw refuse(`The DPoP proof's iat must be within ${DPOP_PROOF_MAX_AGE_SECONDS} seconds of now`);
  if (target.accessToken !== undefined && ath !== sha256Base64Url(target.accessToken))
    throw refuse("The DPoP proof's ath is not the hash of the access token");
  return { jkt: imported.jkt, jti, iat };
}
