// What happens in the browser once the person taps to revoke a client or an allowance that is live on chain: the
// passkey ceremony, unsealing the wallet key and signing each revocation. Loaded on that tap, apart from /clients,
// which is usable before this code (viem's signer, the Delegation Framework's) has arrived on a slow phone.
import { privateKeyToAccount } from "viem/accounts";
import type { PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import { assertForSeals, type StoredSeal } from "@/components/browser/passkey";
import { signRevocation, type RevocationToSign } from "@/lib/allowances/revocation-operation";
import { unsealPrivateKey } from "@/lib/wallet/seal";

/** What the server sends for a revocation ceremony: the challenge, the wallet's seals, what to sign. */
export type RevocationCeremony = {
  options: PublicKeyCredentialRequestOptionsJSON;
  credentialId?: string;
  address?: string;
  seals?: StoredSeal[];
};

/**
 * One passkey tap: the assertion approves the step, and its PRF output unseals the wallet key in this page, which
 * signs each revocation (built here from the delegations shown, see lib/allowances/revocation-operation.ts).
 */
export async function signRevocations<T extends RevocationToSign>(ceremony: RevocationCeremony, revocations: T[]) {
  const { response, prfOutput, seal } = await assertForSeals(ceremony.options, ceremony.seals ?? []);
  let privateKey: `0x${string}`;
  try {
    privateKey = await unsealPrivateKey({ ...seal, prfOutput, credentialId: ceremony.credentialId!, address: ceremony.address! });
  } finally {
    prfOutput.fill(0);
  }
  const account = privateKeyToAccount(privateKey);
  const signed = [];
  for (const revocation of revocations) signed.push({ revocation, signature: await signRevocation(account, revocation) });
  return { assertion: response, signed };
}
