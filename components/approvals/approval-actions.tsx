"use client";

import { privateKeyToAccount } from "viem/accounts";
import type { PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import { callApi } from "@/components/browser/api";
import { Feedback, useAction } from "@/components/browser/use-action";
import { assertForSeals, type StoredSeal } from "@/components/browser/passkey";
import { unsealPrivateKey } from "@/lib/wallet/seal";
import { transactionForSigning, type RequestPayload } from "@/lib/wallet/request-payload";

type ApprovalOptions = {
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
  return account.signTransaction(transactionForSigning(payload.transaction));
}

export function ApprovalActions({ requestId, pending }: { requestId: string; pending: boolean }) {
  const { busy, error, status, run } = useAction();
  const path = `/api/approvals/${encodeURIComponent(requestId)}`;

  const approve = () =>
    run(async () => {
      const approval = await callApi<ApprovalOptions>(`${path}/options`);
      const { response, prfOutput, seal } = await assertForSeals(approval.options, approval.seals);
      const privateKey = await unsealPrivateKey({ ...seal, prfOutput, credentialId: approval.credentialId, address: approval.address });
      prfOutput.fill(0);
      const signature = await signPayload(privateKey, approval.payload);
      const result = await callApi<{ status: string; tx_hash: string | null }>(`${path}/approve`, { assertion: response, signature });
      return result.tx_hash ? `Approved and sent: ${result.tx_hash}` : "Approved and signed.";
    });

  const reject = () =>
    run(async () => {
      await callApi(`${path}/reject`, {});
      return "Rejected.";
    });

  return (
    <div className="stack">
      <Feedback error={error} status={status} />
      {pending && (
        <div className="actions">
          <button type="button" className="primary" disabled={busy} onClick={() => void approve()}>
            Approve with passkey
          </button>
          <button type="button" className="danger" disabled={busy} onClick={() => void reject()}>
            Reject
          </button>
        </div>
      )}
    </div>
  );
}
