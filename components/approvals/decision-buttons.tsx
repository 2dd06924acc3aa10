"use client";
// A pending request's two answers, the same on every approval page: approve with a passkey, or reject.

export function DecisionButtons({
  busy,
  canApprove,
  onApprove,
  onReject,
}: {
  busy: boolean;
  canApprove: boolean;
  onApprove: () => void;
  onReject: () => void;
}) {
  return (
    <div className="actions">
      <button type="button" className="primary" disabled={busy || !canApprove} onClick={onApprove}>
        Approve with passkey
      </button>
      <button type="button" className="danger" disabled={busy} onClick={onReject}>
        Reject
      </button>
    </div>
  );
}
