import { createHash, createPublicKey, verify, type KeyObject } from "node:crypto";
import { verifyAuthenticationResponse, type AuthenticationResponseJSON, type WebAuthnCredential } from "@simplewebauthn/server";
import {
  cose,
  decodeClientDataJSON,
  decodeCredentialPublicKey,
  isoBase64URL,
  isoUint8Array,
  parseAuthenticatorData,
  verifySignature,
} from "@simplewebauthn/server/helpers";
import { LRUCache } from "lru-cache";

/** What an assertion must answer: the challenge issued, the app's origin and RP ID (user verification is required). */
export type AssertionExpectations = { expectedChallenge: string; expectedOrigin: string; expectedRPID: string };

/**
 * An ES256 passkey's public key, imported once (decision 0019): WebCrypto imports it on every verification. Keyed by
 * the passkey's id and its key's bytes, so that a key is never used for a passkey whose stored key differs. `null`:
 * not an ES256 key on P-256, checked by SimpleWebAuthn itself.
 */
const keys = new LRUCache<string, { key: KeyObject } | { key: null }>({ max: 1_000 });

function es256Key(credential: WebAuthnCredential): KeyObject | null {
  const cacheKey = `${credential.id}.${Buffer.from(credential.publicKey).toString("base64url")}`;
  const found = keys.get(cacheKey);
  if (found) return found.key;
  const key = importedES256(credential.publicKey);
  keys.set(cacheKey, { key });
  return key;
}

function importedES256(publicKey: WebAuthnCredential["publicKey"]): KeyObject | null {
  try {
    const decoded = decodeCredentialPublicKey(publicKey);
    if (!cose.isCOSEPublicKeyEC2(decoded)) return null;
    const x = decoded.get(cose.COSEKEYS.x);
    const y = decoded.get(cose.COSEKEYS.y);
    if (
      decoded.get(cose.COSEKEYS.alg) !== cose.COSEALG.ES256 ||
      decoded.get(cose.COSEKEYS.crv) !== cose.COSECRV.P256 ||
      !(x instanceof Uint8Array && x.length === 32 && y instanceof Uint8Array && y.length === 32)
    )
      return null;
    return createPublicKey({
      key: { kty: "EC", crv: "P-256", x: isoBase64URL.fromBuffer(x), y: isoBase64URL.fromBuffer(y) },
      format: "jwk",
    });
  } catch {
    return null;
  }
}

const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest();

/**
 * SimpleWebAuthn's verifyAuthenticationResponse, with user verification required, and for an ES256 passkey without
 * WebCrypto's thread-pool jobs (decision 0019): the same checks in the same order with the same messages, over the
 * library's own parsers, hashed with node:crypto and the signature checked by OpenSSL against the key imported once.
 * A signature OpenSSL refuses is handed to the library's check, which stays the verdict: OpenSSL reads only strict DER,
 * the library's ASN.1 parser more. Other keys (EdDSA, RS256) go to the library unchanged. `lib/auth/assertion.test.ts`
 * holds the two to the same verdicts.
 */
export async function verifiedAssertion(
  response: AuthenticationResponseJSON,
  expected: AssertionExpectations,
  credential: WebAuthnCredential,
): Promise<{ verified: boolean; newCounter: number }> {
  const key = es256Key(credential);
  if (!key) {
    const verification = await verifyAuthenticationResponse({ response, ...expected, credential, requireUserVerification: true });
    return { verified: verification.verified, newCounter: verification.authenticationInfo.newCounter };
  }
  const { id, rawId, type: credentialType, response: assertion } = response;
  if (!id) throw new Error("Missing credential ID");
  if (id !== rawId) throw new Error("Credential ID was not base64url-encoded");
  if (credentialType !== "public-key") throw new Error(`Unexpected credential type ${credentialType}, expected "public-key"`);
  if (typeof assertion?.clientDataJSON !== "string") throw new Error("Credential response clientDataJSON was not a string");
  const { type, origin, challenge, tokenBinding, crossOrigin, topOrigin } = decodeClientDataJSON(assertion.clientDataJSON);
  if (type !== "webauthn.get") throw new Error(`Unexpected authentication response type: ${type}`);
  if (challenge !== expected.expectedChallenge) {
    throw new Error(`Unexpected authentication response challenge "${challenge}", expected "${expected.expectedChallenge}"`);
  }
  // No top origin is expected: the app never runs its ceremonies in another site's frame.
  if (topOrigin) {
    throw new Error(
      crossOrigin
        ? `Detected cross-origin authentication response from top origin of "${topOrigin}", but a value for ` +
            "`expectedTopOrigin` was not specified when calling `verifyAuthenticationResponse()`"
        : `Unexpected top origin of "${topOrigin}" within a non-cross-origin authentication response. This error should be ` +
            "reported to the browser vendor as a WebAuthn specification violation with a link to " +
            "https://w3c.github.io/webauthn/#dom-collectedclientdata-toporigin",
    );
  }
  if (origin !== expected.expectedOrigin) {
    throw new Error(`Unexpected authentication response origin "${origin}", expected "${expected.expectedOrigin}"`);
  }
  if (!isoBase64URL.isBase64URL(assertion.authenticatorData))
    throw new Error("Credential response authenticatorData was not a base64url string");
  if (!isoBase64URL.isBase64URL(assertion.signature)) throw new Error("Credential response signature was not a base64url string");
  if (assertion.userHandle && typeof assertion.userHandle !== "string") throw new Error("Credential response userHandle was not a string");
  if (tokenBinding) {
    if (typeof tokenBinding !== "object") throw new Error("ClientDataJSON tokenBinding was not an object");
    if (!["present", "supported", "notSupported"].includes(tokenBinding.status)) {
      throw new Error(`Unexpected tokenBinding status ${tokenBinding.status}`);
    }
  }
  const authenticatorData = isoBase64URL.toBuffer(assertion.authenticatorData);
  const { rpIdHash, flags, counter } = parseAuthenticatorData(authenticatorData);
  if (!isoUint8Array.areEqual(rpIdHash, sha256(isoUint8Array.fromASCIIString(expected.expectedRPID))))
    throw new Error("Unexpected RP ID hash");
  if (!flags.up) throw new Error("User not present during authentication");
  if (!flags.uv) throw new Error("User verification required, but user could not be verified");
  const signed = isoUint8Array.concat([authenticatorData, sha256(isoBase64URL.toBuffer(assertion.clientDataJSON))]);
  const signature = isoBase64URL.toBuffer(assertion.signature);
  if ((counter > 0 || credential.counter > 0) && counter <= credential.counter) {
    throw new Error(`Response counter value ${counter} was lower than expected ${credential.counter}`);
  }
  if (!flags.be && flags.bs) throw new Error("Single-device credential indicated that it was backed up, which should be impossible.");
  const verified =
    verify("sha256", signed, { key, dsaEncoding: "der" }, signature) ||
    (await verifySignature({ signature, data: signed, credentialPublicKey: credential.publicKey }));
  return { verified, newCounter: counter };
}
