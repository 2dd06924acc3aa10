// What happens in the browser once the person taps Approve: the passkey ceremony, unsealing the wallet key and
// signing. It is loaded apart from the approval page (components/approvals/approval-actions.tsx), which is usable
// before this code — viem's signer, the WebAuthn helpers — has arrived on a slow phone.
import { privateKeyToAccount } from "viem/accounts";
import type { PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import { assertForSeals, type StoredSeal } from "@/components/browser/passkey";
import { unsealPrivateKey } from "@/lib/wallet/seal";
import { transactionForSigning, type RequestPayload } from "@/lib/wallet/request-payload";
import { allowanceAmount } from "@/lib/wallet/allowance-amount";

export type ApprovalOptions = {
  options: PublicKeyCredentialRequestOptionsJSON;
  credentialId: string;
  address: string;
  payload: RequestPayload;
  seals: StoredSeal[];
};

/** Signs exactly the prepared payload with the key unsealed in this page's memory. */
async function signPayload(privateKey: `0x${string}`, payload: RequestPayload): Promise<string> {
  const account = privateKeyToAccount(privateKey);
  if (payload.kind === "sign_message") return account.signMessage({ message: payload.message });
  if (payload.kind === "sign_typed_data") return account.signTypedData(payload.typedData as Parameters<typeof account.signTypedData>[0]);
  // signed as allowances are, with their own card and ceremony (components/approvals/asked-allowance.tsx)
  if (payload.kind === "request_allowance") throw new Error("An allowance is not signed as a single payload.");
  return account.signTransaction(transactionForSigning(payload.transaction));
}

/**
 * One passkey assertion answering the server's challenge, and the payload's signature by the key it unseals. When the
 * person lowered an allowance, the payload must carry exactly that amount, whatever the server answered.
 */
export async function assertAndSign(approval: ApprovalOptions, loweredAmount?: bigint) {
  if (loweredAmount !== undefined && allowanceAmount(approval.payload)?.amount !== loweredAmount) {
    throw new Error("The prepared request does not carry the amount you chose. Nothing was signed.");
  }
  const { response, prfOutput, seal } = await assertForSeals(approval.options, approval.seals);
  const privateKey = await unsealPrivateKey({ ...seal, prfOutput, credentialId: approval.credentialId, address: approval.address });
  prfOutput.fill(0);
  return { assertion: response, signature: await signPayload(privateKey, approval.payload) };
}
