"use client";

import { useEffect, useState, type ReactNode } from "react";
import { useRouter } from "next/navigation";
import type { PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import { callApi, messageOf } from "@/components/browser/api";
import { Feedback, useAction } from "@/components/browser/use-action";
import { loadAllowanceSigning } from "@/components/grants/allowance-form";
import { AllowanceCard } from "@/components/grants/allowance-card";
import type { AllowanceChain, AllowanceReview } from "@/components/grants/allowance-types";
import type { PreparedAllowance } from "@/lib/allowances/ceremony";
import type { Contact } from "@/lib/wallet/address-book";
import type { RequestStatus } from "@/contract";
import { DecisionButtons } from "./decision-buttons";

/**
 * An agent's request for an allowance its own key spends: the server prepares the delegations to the agent's address,
 * this page decodes and states them on the allowance card (never from what the server says they mean), and one
 * passkey tap unseals the wallet's key and signs exactly them; or the person rejects it. Then the one outcome line.
 */
export function AskedAllowanceActions({
  requestId,
  status: current,
  walletName,
  chain,
  contacts,
  children,
}: {
  requestId: string;
  status: RequestStatus;
  walletName: string;
  chain: AllowanceChain;
  contacts: Contact[];
  children: ReactNode;
}) {
  const router = useRouter();
  const { busy, error, status, run } = useAction();
  const [review, setReview] = useState<AllowanceReview>();
  const pending = current === "pending";
  const path = `/api/approvals/${encodeURIComponent(requestId)}`;

  useEffect(() => {
    if (!pending) return;
    let live = true;
    (async () => {
      try {
        const [prepared, { reviewOf }] = await Promise.all([
          callApi<PreparedAllowance>(`${path}/allowance/prepare`, {}),
          loadAllowanceSigning(),
        ]);
        if (live) setReview({ prepared, ...reviewOf(prepared, chain, contacts) });
      } catch (caught) {
        if (live) setReview({ error: messageOf(caught) });
      }
    })();
    return () => {
      live = false;
    };
  }, [pending, path, chain, contacts]);

  const approve = () =>
    run(async () => {
      if (!review || "error" in review) throw new Error("Nothing to sign yet.");
      const { signReviewedAllowance } = await loadAllowanceSigning();
      const { assertion, allowance } = await signReviewedAllowance(review.prepared, (binding) =>
        callApi<PublicKeyCredentialRequestOptionsJSON>(`${path}/allowance/options`, { allowance: binding }),
      );
      await callApi(`${path}/allowance`, { allowance, assertion });
      router.refresh();
      return "Approved: the agent's key can now spend within this allowance, and only it.";
    });

  const reject = () =>
    run(async () => {
      await callApi(`${path}/reject`, {});
      router.refresh();
      return "Rejected. Nothing was signed.";
    });

  const reviewed = review && !("error" in review) ? review : null;
  return (
    <div className="stack decision">
      {error || status ? <Feedback error={error} status={error ? null : status} /> : children}
      {pending && !review && <p className="muted small">Preparing the allowance to sign…</p>}
      {pending && review && "error" in review && (
        <p role="alert" className="error">
          Nothing will be signed: {review.error}
        </p>
      )}
      {pending && reviewed && <AllowanceCard name={walletName} review={reviewed} />}
      {pending && (
        <DecisionButtons busy={busy} canApprove={Boolean(reviewed)} onApprove={() => void approve()} onReject={() => void reject()} />
      )}
    </div>
  );
}
