import { formatEther, formatGwei } from "viem";
import { requireUser } from "@/lib/auth/session";
import { NotFoundError } from "@/lib/http/errors";
import { loadApproval } from "@/lib/wallet/approvals";
import { AppHeader } from "@/components/nav/app-header";
import { ApprovalActions } from "@/components/approvals/approval-actions";
import { AutoRefresh } from "@/components/approvals/auto-refresh";

function Field({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </>
  );
}

function Value({ value }: { value: unknown }) {
  if (value !== null && typeof value === "object") {
    return (
      <dl className="nested">
        {Object.entries(value as Record<string, unknown>).map(([key, inner]) => (
          <Field key={key} label={key}>
            <Value value={inner} />
          </Field>
        ))}
      </dl>
    );
  }
  return <span className="mono">{String(value)}</span>;
}

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
  const { view, payload, chain } = approval;
  const title = payload.kind === "sign_message" ? "Sign a message" : payload.kind === "sign_typed_data" ? "Sign typed data" : "Send a transaction";
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
          {payload.kind === "sign_message" && (
            <Field label="Message">
              <pre className="message">{payload.message}</pre>
            </Field>
          )}
          {payload.kind === "sign_typed_data" && (
            <>
              <Field label="Domain">
                <Value value={payload.typedData.domain ?? {}} />
              </Field>
              <Field label={`${String(payload.typedData.primaryType)} fields`}>
                <Value value={payload.typedData.message} />
              </Field>
            </>
          )}
          {payload.kind === "send_transaction" && chain && (
            <>
              <Field label="Chain">
                {chain.name} ({chain.id})
              </Field>
              <Field label="Recipient">
                <span className="mono">{payload.transaction.to}</span>
              </Field>
              <Field label="Amount">
                <strong>
                  {formatEther(BigInt(payload.transaction.value))} {chain.symbol}
                </strong>
              </Field>
              <Field label="Data">
                <span className="mono">{payload.transaction.data === "0x" ? "none (a plain transfer)" : payload.transaction.data}</span>
              </Field>
              <Field label="Maximum network fee">
                {formatEther(BigInt(payload.transaction.gas) * BigInt(payload.transaction.maxFeePerGas))} {chain.symbol} ({payload.transaction.gas} gas at up to{" "}
                {formatGwei(BigInt(payload.transaction.maxFeePerGas))} gwei)
              </Field>
              <Field label="Nonce">{payload.transaction.nonce}</Field>
            </>
          )}
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
