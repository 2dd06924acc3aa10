import { requireUser } from "@/lib/auth/session";
import { NotFoundError } from "@/lib/http/errors";
import { loadApproval } from "@/lib/wallet/approvals";
import { describeRequest } from "@/lib/wallet/request-description";
import { contactNames } from "@/lib/wallet/address-book";
import { AppHeader } from "@/components/nav/app-header";
import { ApprovalActions } from "@/components/approvals/approval-actions";
import { AutoRefresh } from "@/components/approvals/auto-refresh";
import { Field } from "@/components/approvals/fields";
import { TransactionDetails } from "@/components/approvals/transaction-details";
import { TypedDataDetails } from "@/components/approvals/typed-data-details";

export default async function ApprovalPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const user = await requireUser(`/approvals/${id}`);
  let approval;
  try {
    approval = await loadApproval(user.id, id);
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    return (
      <>
        <AppHeader email={user.email} />
        <main>
          <h1>Request not found</h1>
          <p>This request does not exist or is not yours.</p>
        </main>
      </>
    );
  }
  const { view } = approval;
  const [description, names] = await Promise.all([describeRequest(approval.payload), contactNames(user.id)]);
  const title =
    description.kind === "sign_message"
      ? "Sign a message"
      : description.kind === "sign_typed_data"
        ? "Sign typed data"
        : "Send a transaction";
  return (
    <>
      <AppHeader email={user.email} />
      <main>
        {view.status === "pending" || view.status === "submitted" ? <AutoRefresh seconds={3} /> : null}
        <h1>{title}</h1>
        <p>
          <strong>{approval.clientName}</strong> asks to use <strong>{approval.credentialName}</strong>.
        </p>
        <dl className="summary">
          <Field label="Status">
            <span className="badge">{view.status}</span> {view.reason && <span className="muted">{view.reason}</span>}
          </Field>
          <Field label="Wallet">
            {approval.credentialName} <span className="mono small">{approval.address}</span>
          </Field>
          {description.kind === "sign_message" && (
            <Field label="Message">
              <pre className="message">{description.message}</pre>
            </Field>
          )}
          {description.kind === "sign_typed_data" && <TypedDataDetails {...description} names={names} />}
          {description.kind === "send_transaction" && <TransactionDetails {...description} names={names} />}
          {view.signature && (
            <Field label="Signature">
              <span className="mono small">{view.signature}</span>
            </Field>
          )}
          {view.tx_hash && (
            <Field label="Transaction hash">
              <span className="mono small">{view.tx_hash}</span>
            </Field>
          )}
          <Field label="Expires">{new Date(view.expires_at).toLocaleString()}</Field>
        </dl>
        {/* Mounted whatever the status, so the outcome of a decision stays on screen after the refresh. */}
        <ApprovalActions requestId={view.request_id} pending={view.status === "pending"} />
      </main>
    </>
  );
}
