"use client";

import { useEffect, useState, type ReactNode } from "react";
import { useRouter } from "next/navigation";
import { formatUnits, parseUnits } from "viem";
import { callApi } from "@/components/browser/api";
import { Feedback, useAction } from "@/components/browser/use-action";
import { isUnlimitedAmount } from "@/lib/wallet/call-decoding";
import type { RequestStatus, RequestView } from "@/contract";
import type { ApprovalOptions } from "./sign-approval";
import { DecisionButtons } from "./decision-buttons";

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

/** An allowance the person may lower: the amount asked (smallest unit, decimal) and its token's units. */
type Allowance = { amount: string; symbol: string; decimals: number };

/** The amount the person typed, when it lowers the asked one; an error when it cannot be read or is higher. */
function loweredAmount(text: string, allowance: Allowance): { amount?: bigint; error?: string } {
  const asked = BigInt(allowance.amount);
  if (!text.trim()) return {};
  let amount: bigint;
  try {
    amount = parseUnits(text.trim(), allowance.decimals);
  } catch {
    return { error: `Enter an amount of ${allowance.symbol}, like 100 or 0.5` };
  }
  if (amount > asked)
    return { error: `You can only lower the amount: at most ${formatUnits(asked, allowance.decimals)} ${allowance.symbol}` };
  return amount < asked ? { amount } : {};
}

/**
 * Approve and Reject while the request is pending, and then the one outcome line: the outcome of the person's own
 * action, or else the page's account of the request (`children`). `status` is the request's as the page last
 * rendered it, and the line never contradicts it: once it has failed, a success line from earlier (a transaction
 * sent, then reverted) gives way to the page's account of the failure; once it went through, an error from a late
 * second attempt (another tab approved first) does. An allowance's amount can be lowered before signing, and a risk
 * the person must `acknowledge` keeps Approve disabled until they check it (unless the lowered amount ends it).
 */
export function ApprovalActions({
  requestId,
  status: current,
  acknowledge,
  allowance,
  children,
}: {
  requestId: string;
  status: RequestStatus;
  acknowledge: string | null;
  allowance: Allowance | null;
  children: ReactNode;
}) {
  const router = useRouter();
  const { busy, error, status, run } = useAction();
  const unlimited = allowance !== null && isUnlimitedAmount(BigInt(allowance.amount));
  const [amountText, setAmountText] = useState(allowance && !unlimited ? formatUnits(BigInt(allowance.amount), allowance.decimals) : "");
  const [understood, setUnderstood] = useState(false);
  const pending = current === "pending";
  const path = `/api/approvals/${encodeURIComponent(requestId)}`;
  const lowered = allowance ? loweredAmount(amountText, allowance) : {};
  const mustAcknowledge = acknowledge !== null && (lowered.amount === undefined || isUnlimitedAmount(lowered.amount));

  useEffect(() => {
    if (!pending) return;
    // Once the page has settled: evaluating the signer is a long task that must not hold up an early tap.
    const whenIdle = "requestIdleCallback" in window ? window.requestIdleCallback : (run: () => void) => setTimeout(run, 1000);
    whenIdle(() => void loadSigner());
  }, [pending]);

  const approve = () =>
    run(async () => {
      const decision = {
        ...(lowered.amount === undefined ? {} : { amount: lowered.amount.toString() }),
        ...(mustAcknowledge ? { acknowledged: understood } : {}),
      };
      const [{ assertAndSign }, approval] = await Promise.all([loadSigner(), callApi<ApprovalOptions>(`${path}/options`, decision)]);
      const view = await callApi<RequestView>(`${path}/approve`, { ...decision, ...(await assertAndSign(approval, lowered.amount)) });
      if (view.status === "failed") {
        router.refresh();
        throw new Error(`Approved, but the transaction failed: ${view.reason ?? "no reason given"}`);
      }
      return outcomeLine(view);
    });

  const reject = () =>
    run(async () => {
      await callApi(`${path}/reject`, {});
      return "Rejected. Nothing was signed.";
    });

  const shownError = APPROVED.includes(current) ? null : error;
  const shownStatus = current === "failed" ? null : status;
  return (
    <div className="stack decision">
      {shownError || shownStatus ? <Feedback error={shownError} status={shownError ? null : shownStatus} /> : children}
      {pending && allowance && (
        <div className="allowance-amount">
          <label htmlFor="allowance-amount">Amount to allow ({allowance.symbol})</label>
          <input
            id="allowance-amount"
            inputMode="decimal"
            autoComplete="off"
            placeholder={unlimited ? "unlimited, as asked" : undefined}
            value={amountText}
            disabled={busy}
            aria-describedby="allowance-amount-hint"
            aria-invalid={lowered.error ? true : undefined}
            onChange={(event) => setAmountText(event.target.value)}
          />
          <p id="allowance-amount-hint" className={lowered.error ? "small error" : "small muted"}>
            {lowered.error ?? "Lower it to limit what can be taken. Exactly this amount is signed."}
          </p>
        </div>
      )}
      {pending && mustAcknowledge && (
        <label className="acknowledge">
          <input type="checkbox" checked={understood} disabled={busy} onChange={(event) => setUnderstood(event.target.checked)} />{" "}
          {acknowledge}
        </label>
      )}
      {pending && (
        <DecisionButtons
          busy={busy}
          canApprove={!lowered.error && (!mustAcknowledge || understood)}
          onApprove={() => void approve()}
          onReject={() => void reject()}
        />
      )}
    </div>
  );
}
