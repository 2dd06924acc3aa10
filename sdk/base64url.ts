/** Bytes as base64url without padding (RFC 4648 §5), as PKCE and JWS write them; btoa, so it runs in browsers too. */
export function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
