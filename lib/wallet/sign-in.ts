// Sign-In with Ethereum (EIP-4361) messages, read with viem's parser: which site asks the person to sign in, and
// whether it is a site of the client that asks (a message written for another site is how a sign-in is phished).
// Pure and browser-safe; the message shown and signed stays the whole text.
import { parseSiweMessage } from "viem/siwe";

export type SignIn = {
  /** the site the signature signs in to (EIP-4361's domain: host and optional port) */
  domain: string;
  address: string;
  uri: string;
  chainId: number | null;
  statement: string | null;
  /** ISO 8601 */
  expirationTime: string | null;
};

/** The sign-in a message is, or null when it is not an EIP-4361 message (every required field present). */
export function signInOf(message: string): SignIn | null {
  let parsed;
  try {
    parsed = parseSiweMessage(message);
  } catch {
    return null;
  }
  const { domain, address, uri, version, nonce } = parsed;
  if (!domain || !address || !uri || !version || !nonce) return null;
  return {
    domain,
    address,
    uri,
    chainId: parsed.chainId ?? null,
    statement: parsed.statement ?? null,
    expirationTime: parsed.expirationTime?.toISOString() ?? null,
  };
}

/** A host name as compared: lower case, without port or user; null when `authority` is not one. */
function hostname(authority: string): string | null {
  try {
    return new URL(`https://${authority}`).hostname.toLowerCase();
  } catch {
    return null;
  }
}

/**
 * Whether the site a sign-in is for is one of `hosts` (the asking client's: its redirect URIs, client_uri, metadata
 * document). Ports are not compared: a client's loopback redirect takes any port.
 */
export function signInMatches(signIn: SignIn, hosts: string[]): boolean {
  const site = hostname(signIn.domain);
  return site !== null && hosts.some((host) => hostname(host) === site);
}
