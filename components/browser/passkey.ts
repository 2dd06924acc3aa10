// Passkey ceremonies in the browser, including the PRF evaluation that unlocks
// sealed wallet keys. The PRF output stays in this page's memory: it is removed
// from the assertion before anything is posted.
import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import { fromBase64Url, toBase64Url, unsealPrivateKey } from "@/lib/wallet/seal";
import { callApi } from "./api";

/** SimpleWebAuthn's ceremony, loaded with the first one: the pages that offer a passkey action are usable before it arrives. */
export async function startAuthentication(...args: Parameters<typeof import("@simplewebauthn/browser").startAuthentication>) {
  return (await import("@simplewebauthn/browser")).startAuthentication(...args);
}

class NoPrfError extends Error {
  constructor() {
    super(
      "This passkey does not support the PRF extension, so it cannot seal or unlock wallet keys. You can still add watch-only addresses.",
    );
    this.name = "NoPrfError";
  }
}

/** One assertion that also evaluates PRF with `salt`; returns the assertion (without PRF results) and the output. */
export async function assertWithPrf(options: PublicKeyCredentialRequestOptionsJSON, salt: Uint8Array<ArrayBuffer>) {
  const withPrf = {
    ...options,
    extensions: { ...options.extensions, prf: { eval: { first: salt } } },
  } as PublicKeyCredentialRequestOptionsJSON;
  const response = await startAuthentication({ optionsJSON: withPrf });
  const results = response.clientExtensionResults as { prf?: { results?: { first?: ArrayBuffer } } };
  const output = results.prf?.results?.first;
  delete results.prf;
  if (!output) throw new NoPrfError();
  return { response: response as AuthenticationResponseJSON, prfOutput: new Uint8Array(output) };
}

export type StoredSeal = { passkeyId: string; ciphertext: string; iv: string; prfSalt: string; transports?: string[] };

/**
 * One assertion by any passkey that sealed the key, evaluating PRF with that
 * passkey's own salt; returns the assertion and the seal it can open.
 */
export async function assertForSeals(options: PublicKeyCredentialRequestOptionsJSON, seals: StoredSeal[]) {
  const prf =
    seals.length === 1
      ? { eval: { first: fromBase64Url(seals[0].prfSalt) } }
      : { evalByCredential: Object.fromEntries(seals.map((seal) => [seal.passkeyId, { first: fromBase64Url(seal.prfSalt) }])) };
  const response = await startAuthentication({
    optionsJSON: { ...options, extensions: { ...options.extensions, prf } } as PublicKeyCredentialRequestOptionsJSON,
  });
  const results = response.clientExtensionResults as { prf?: { results?: { first?: ArrayBuffer } } };
  const output = results.prf?.results?.first;
  delete results.prf;
  if (!output) throw new NoPrfError();
  const seal = seals.find((candidate) => candidate.passkeyId === response.id);
  if (!seal) throw new Error("That passkey did not seal this wallet's key");
  return { response: response as AuthenticationResponseJSON, prfOutput: new Uint8Array(output), seal };
}

/**
 * Unseals a wallet key with any passkey that sealed it. The challenge is made
 * here: nothing is sent to the server, which has no part in unsealing.
 */
export async function unsealLocally(seals: StoredSeal[], credentialId: string, address: string) {
  const challenge = toBase64Url(crypto.getRandomValues(new Uint8Array(32)));
  const options = {
    challenge,
    rpId: location.hostname,
    allowCredentials: seals.map((seal) => ({
      id: seal.passkeyId,
      type: "public-key" as const,
      transports: seal.transports as AuthenticatorTransport[] | undefined,
    })),
    userVerification: "required" as const,
  };
  const { prfOutput, seal } = await assertForSeals(options, seals);
  try {
    return await unsealPrivateKey({ ...seal, prfOutput, credentialId, address });
  } finally {
    prfOutput.fill(0);
  }
}

/**
 * A passkey approval for one guarded operation (lib/auth/step-up.ts): the
 * operation's options route issues a challenge bound to exactly this operation,
 * a passkey of the account answers it, and the assertion goes with the request.
 */
export async function approveWithPasskey(optionsPath: string, body: unknown = {}): Promise<AuthenticationResponseJSON> {
  const optionsJSON = await callApi<PublicKeyCredentialRequestOptionsJSON>(optionsPath, body);
  return startAuthentication({ optionsJSON });
}

/**
 * Unseals a wallet key to take it out of Agent Wallet (shown in the page or written to a recovery
 * kit): the server issues and audits the challenge, a passkey that sealed the key answers it, and
 * the key stays in this page. Nothing derived from the key is posted.
 */
export async function unsealForExport(credentialId: string, reason: "key" | "recovery-kit") {
  const { options, address, seals } = await callApi<{
    options: PublicKeyCredentialRequestOptionsJSON;
    address: string;
    seals: StoredSeal[];
  }>(`/api/credentials/${credentialId}/export-options`, { reason });
  const { prfOutput, seal } = await assertForSeals(options, seals);
  try {
    return { address, privateKey: await unsealPrivateKey({ ...seal, prfOutput, credentialId, address }) };
  } finally {
    prfOutput.fill(0);
  }
}
