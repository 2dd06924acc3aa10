"use client";

import { useRouter } from "next/navigation";
import { privateKeyToAccount } from "viem/accounts";
import type { PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import { callApi } from "@/components/browser/api";
import { Feedback, useAction } from "@/components/browser/use-action";
import { assertForSeals, type StoredSeal } from "@/components/browser/passkey";
import { unsealPrivateKey } from "@/lib/wallet/seal";
import { transactionForSigning, type RequestPayload } from "@/lib/wallet/request-payload";
import type { RequestStatus, RequestView } from "@/contract";

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

/** The approval's outcome as the server reports it, when it succeeded (a failure is an error, never both). */
function outcomeLine(view: RequestView): string {
  if (view.status === "submitted") return `Approved and sent: ${view.tx_hash}. Waiting for it to be included in a block.`;
  return view.tx_hash ? `Approved and sent: ${view.tx_hash}` : "Approved and signed.";
}

/** Where the person's approval went through, whoever's click it was. */
const APPROVED: RequestStatus[] = ["approved", "submitted", "completed"];

/**
 * Approve and Reject while the request is pending, and the outcome of the person's own action. `status` is the
 * request's as the page last rendered it, and the line never contradicts it: once it has failed, a success line
 * from earlier (a transaction sent, then reverted) gives way to the page's account of the failure; once it went
 * through, an error from a late second attempt (another tab approved first) does.
 */
export function ApprovalActions({ requestId, status: current }: { requestId: string; status: RequestStatus }) {
  const router = useRouter();
  const { busy, error, status, run } = useAction();
  const pending = current === "pending";
  const path = `/api/approvals/${encodeURIComponent(requestId)}`;

  const approve = () =>
    run(async () => {
      const approval = await callApi<ApprovalOptions>(`${path}/options`);
      const { response, prfOutput, seal } = await assertForSeals(approval.options, approval.seals);
      const privateKey = await unsealPrivateKey({ ...seal, prfOutput, credentialId: approval.credentialId, address: approval.address });
      prfOutput.fill(0);
      const signature = await signPayload(privateKey, approval.payload);
      const view = await callApi<RequestView>(`${path}/approve`, { assertion: response, signature });
      if (view.status === "failed") {
        router.refresh();
        throw new Error(`Approved, but the transaction failed: ${view.reason ?? "no reason given"}`);
      }
      return outcomeLine(view);
    });

  const reject = () =>
    run(async () => {
      await callApi(`${path}/reject`, {});
      return "Rejected.";
    });

  return (
    <div className="stack">
      <Feedback error={APPROVED.includes(current) ? null : error} status={current === "failed" ? null : status} />
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
