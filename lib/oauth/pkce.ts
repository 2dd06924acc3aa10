import { safeEqual, sha256Base64Url } from "@/lib/crypto";

/** RFC 7636 §4.1: 43–128 unreserved characters. An S256 challenge is 43 base64url characters. */
export const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;

/** Whether `verifier` is a well-formed RFC 7636 verifier whose S256 hash is `challenge`. */
export function verifyPkce(verifier: string, challenge: string): boolean {
  return PKCE_VALUE.test(verifier) && safeEqual(sha256Base64Url(verifier), challenge);
}
