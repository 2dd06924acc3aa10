"use client";

import { useEffect } from "react";
import { useRouter } from "next/navigation";
import { callApi } from "@/components/browser/api";
import { Feedback, useAction } from "@/components/browser/use-action";
import type { RequestStatus, RequestView } from "@/contract";
import type { ApprovalOptions } from "./sign-approval";

/**
 * The signing code, apart from the page so that the buttons work before it has arrived: fetched once the page is
 * usable, and awaited on a tap that comes first (docs/performance.md).
 */
const loadSigner = () => import("./sign-approval");

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
  useEffect(() => {
    if (!pending) return;
    // Once the page has settled: evaluating the signer is a long task that must not hold up an early tap.
    const whenIdle = "requestIdleCallback" in window ? window.requestIdleCallback : (run: () => void) => setTimeout(run, 1000);
    whenIdle(() => void loadSigner());
  }, [pending]);

  const approve = () =>
    run(async () => {
      const [{ assertAndSign }, approval] = await Promise.all([loadSigner(), callApi<ApprovalOptions>(`${path}/options`)]);
      const view = await callApi<RequestView>(`${path}/approve`, await assertAndSign(approval));
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
