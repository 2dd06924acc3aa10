// What happens in the browser once the person taps to create or import a wallet: the key made or checked here, sealed
// under the passkey's PRF output. Loaded on that tap (create-wallet-form.tsx), apart from the pages that offer it,
// which are usable before this code (viem's key code, the sealing) has arrived on a slow phone.
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import { callApi } from "@/components/browser/api";
import { assertWithPrf } from "@/components/browser/passkey";
import { newPrfSalt, sealPrivateKey } from "@/lib/wallet/seal";

/**
 * Creates or imports a key in this page, seals it under the passkey's PRF
 * output and uploads only the ciphertext. The private key never leaves the page.
 */
export async function connectSealedKey(name: string, privateKey: `0x${string}`) {
  const account = privateKeyToAccount(privateKey);
  const { credentialId, options } = await callApi<{ credentialId: string; options: PublicKeyCredentialRequestOptionsJSON }>(
    "/api/credentials/seal-options",
  );
  const salt = newPrfSalt();
  const { response, prfOutput } = await assertWithPrf(options, salt);
  const seal = await sealPrivateKey({ privateKey, prfOutput, salt, credentialId, address: account.address });
  prfOutput.fill(0);
  await callApi("/api/credentials", { kind: "evm", name, address: account.address, seal, assertion: response });
}

/** A new key, generated in this page and connected sealed: it never leaves the page. */
export async function createSealedKey(name: string) {
  await connectSealedKey(name, generatePrivateKey());
}
