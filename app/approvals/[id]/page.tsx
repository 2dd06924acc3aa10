import Link from "next/link";
import { formatEther } from "viem";
import { fromNow, utcDateTime } from "@/lib/clock";
import { currentUser } from "@/lib/auth/session";
import { NotFoundError } from "@/lib/http/errors";
import { loadApproval, lowerableAllowance, nextPendingRequest } from "@/lib/wallet/approvals";
import { knownAddresses, requestRisk } from "@/lib/wallet/risk";
import { describeRequest } from "@/lib/wallet/request-description";
import { contactNames } from "@/lib/wallet/address-book";
import { policyStanding } from "@/lib/wallet/policy";
import { requestingClient } from "@/lib/oauth/connected-clients";
import type { Chain } from "@/lib/config";
import type { RequestView } from "@/contract";
import { AppHeader } from "@/components/nav/app-header";
import { ApprovalActions } from "@/components/approvals/approval-actions";
import { AskedAllowanceActions } from "@/components/approvals/asked-allowance";
import { AutoRefresh } from "@/components/approvals/auto-refresh";
import { BalanceFields } from "@/components/approvals/balance-fields";
import { CopyButton } from "@/components/shared/copy-button";
import { AddressText, Field } from "@/components/approvals/fields";
import { headlineAmounts, headlineOf } from "@/lib/wallet/headline";
import { valuedAmounts } from "@/lib/prices/holdings";
import { AmountValues } from "@/components/prices/amount-values";
import { escapedText } from "@/lib/text/visible-text";
import { MessageText } from "@/components/approvals/message-text";
import { PhoneHandoff } from "@/components/approvals/phone-handoff";
import { SignedOutApproval } from "@/components/approvals/signed-out-approval";
import { SignInCheck, SignInDetails } from "@/components/approvals/sign-in-details";
import { TransactionDetails } from "@/components/approvals/transaction-details";
import { TypedDataDetails } from "@/components/approvals/typed-data-details";
import { ResourceClaim } from "@/components/approvals/resource-claim";
import { paidHeadline, paidWithoutTap, type PaidWithoutTap } from "@/lib/x402/paid";

const TITLES = {
  sign_message: "Sign a message",
  sign_typed_data: "Sign typed data",
  send_transaction: "Send a transaction",
  request_allowance: "Give an allowance to the agent's own key",
};

/** Where a payment signed with no tap stands: the merchant's facilitator settles it on chain, or it lapses. */
function paidOutcome(paid: PaidWithoutTap): string {
  if (paid.status === "settled") return "Paid within your allowance, with no tap: the merchant has settled it on chain.";
  if (paid.status === "expired") return "Signed within your allowance, with no tap, but the merchant never settled it: nothing moved.";
  const until = paid.expiresAt ? ` by ${utcDateTime(paid.expiresAt)}` : "";
  return `Paid within your allowance, with no tap: signed for the merchant, whose facilitator settles it on chain${until} or never.`;
}

/** Where the request stands, in a sentence, with the transaction on the chain's explorer when it has one. */
function Outcome({ view, chain, paid }: { view: RequestView; chain: Chain | null; paid: PaidWithoutTap | null }) {
  const explorer = view.tx_hash && chain?.explorerUrl ? `${chain.explorerUrl.replace(/\/$/, "")}/tx/${view.tx_hash}` : null;
  const sentence: Record<RequestView["status"], string> = {
    pending: `Waiting for you until ${utcDateTime(new Date(view.expires_at))}.`,
    approved: "Approved and signed. The agent receives the signature.",
    submitted: "Approved and sent to the network; waiting for it to be included in a block.",
    completed: view.tx_hash
      ? "Done: the transaction is included in a block."
      : view.permission
        ? "Done: the agent's own key can now spend within this allowance; it is listed on Clients, where you can revoke it."
        : "Done: the agent has the signature.",
    failed: `Failed${view.reason ? `: ${view.reason}` : "."}`,
    rejected: "You rejected this request. Nothing was signed.",
    expired: "This request expired before it was decided. Nothing was signed; the agent has to ask again.",
    cancelled: `The request was cancelled${view.reason ? ` (${view.reason})` : ""}. Nothing was signed.`,
  };
  return (
    <p className={`outcome ${view.status}`}>
      <span className="badge">{view.status}</span> {paid ? paidOutcome(paid) : sentence[view.status]}
      {explorer && (
        <>
          {" "}
          <a href={explorer} rel="noreferrer" target="_blank">
            View on the explorer
          </a>
        </>
      )}
    </p>
  );
}

export default async function ApprovalPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const user = await currentUser();
  if (!user) return <SignedOutApproval path={`/approvals/${encodeURIComponent(id)}`} />;
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
          <p>This request does not exist or is not yours. If another account of yours owns it, sign out and sign in with that one.</p>
          <p>
            <Link href="/approvals">See your approvals</Link>
          </p>
        </main>
      </>
    );
  }
  const { view } = approval;
  const pending = view.status === "pending";
  // Every chain read here waits a moment at most, all at once: a slow or dead node never holds the decision.
  const describing = describeRequest(approval.payload);
  const naming = contactNames(user.id);
  const asking = requestingClient(user.id, approval.grantId);
  const [description, names, client, limits, lowerable, next, risk] = await Promise.all([
    describing,
    naming,
    asking,
    pending ? policyStanding(approval.grantId, approval.credentialId, new Date()) : null,
    pending ? lowerableAllowance(approval.payload) : null,
    pending ? null : nextPendingRequest(user.id, view.request_id),
    pending
      ? requestRisk(approval.payload, describing, {
          known: () => naming.then((known) => knownAddresses(user.id, known)),
          holder: (approval.address || undefined) as `0x${string}` | undefined,
          askerHosts: () => asking.then((asker) => asker?.hosts ?? []),
        })
      : null,
  ]);
  const unavailable = [...description.unavailable, ...(risk?.unavailable ?? [])];
  const chain = description.kind === "send_transaction" ? description.chain : null;
  // pay_x402 within an allowance: a completed transfer whose audit event names the payment (with a transaction of its
  // own where it funded the agent's account)
  const paid = chain && view.status === "completed" ? await paidWithoutTap(user.id, view.request_id, chain.id) : null;
  const payment = description.kind === "sign_typed_data" ? description.payment : null;
  const today = limits?.remaining.native_by_chain.find((entry) => entry.chain_id === chain?.id)?.per_day;
  return (
    <>
      <AppHeader email={user.email} />
      <main className="approval">
        {pending || view.status === "submitted" ? <AutoRefresh seconds={3} /> : null}
        <h1>{paid ? "Paid for a resource" : payment ? "Pay for a resource" : TITLES[description.kind]}</h1>
        <p className="headline">{paid ? paidHeadline(paid, names) : headlineOf(description, approval.credentialName, names)}</p>
        {paid && (
          <p className="no-tap" role="note">
            Paid with no tap, within the allowance you signed for this agent: nothing waited for you, and the chain holds it to the
            allowance&apos;s limits.
          </p>
        )}
        {/* What the headline's amounts are worth, under it on a phone's first screen (only while it waits: a decided
            request's value today is not the one it was decided at). */}
        {pending && (
          <div className="headline-values">
            <AmountValues values={valuedAmounts(headlineAmounts(description))} />
          </div>
        )}
        {description.kind === "sign_typed_data" && description.payment?.resource.description ? (
          <p className="payment-for">
            The resource describes itself as: <strong>“{escapedText(description.payment.resource.description)}”</strong>
          </p>
        ) : null}
        {pending && view.reason ? (
          <p className="risk" role="note">
            <strong>Not paid from the allowance:</strong> {view.reason}
          </p>
        ) : null}
        {risk?.risks.length ? (
          <p className="risk" role="note">
            <strong>Check before approving:</strong> {risk.risks.map((entry) => entry.text).join(" · ")}
          </p>
        ) : null}
        {unavailable.length > 0 && (
          <p className="unavailable small" role="note">
            <strong>Not available now</strong> (the chain did not answer in time): {unavailable.join("; ")}. Nothing here is guessed.
          </p>
        )}
        <p className="asker small">
          {client?.kind === "api_key" ? (
            <>
              Asked with your API key <strong>{approval.clientName}</strong>
            </>
          ) : (
            <>
              Asked by an application that calls itself <strong>“{approval.clientName}”</strong>
              {client?.metadataHost ? ` · client metadata from ${client.metadataHost}` : ""}
              {client?.redirectHosts.length ? ` · sends you back to ${client.redirectHosts.join(", ")}` : ""}
            </>
          )}
          {client ? ` · connected ${fromNow(client.connectedAt)}` : ""}
        </p>
        {description.kind === "sign_message" && description.signIn && (
          <SignInCheck signIn={description.signIn} asker={{ name: approval.clientName, hosts: client?.hosts ?? [] }} />
        )}
        {description.kind === "request_allowance" && (
          <p className="payment-for">
            The agent says why it asks: <strong>“{escapedText(description.allowance.justification)}”</strong>
          </p>
        )}
        {/* Right after the sentence and its risks, so a phone reaches the decision without scrolling; mounted whatever
            the status, so the outcome of a decision stays on screen after the refresh, as the one outcome line. */}
        {description.kind === "request_allowance" ? (
          <AskedAllowanceActions
            requestId={view.request_id}
            status={view.status}
            walletName={approval.credentialName}
            chain={{ id: description.chain.id, name: description.chain.name, symbol: description.chain.symbol }}
            contacts={Object.entries(names).map(([address, label]) => ({ address, label }))}
          >
            <Outcome view={view} chain={null} paid={null} />
          </AskedAllowanceActions>
        ) : (
          <ApprovalActions
            requestId={view.request_id}
            status={view.status}
            acknowledge={risk?.acknowledge ?? null}
            allowance={
              lowerable && {
                amount: lowerable.allowance.amount.toString(),
                symbol: lowerable.token.symbol,
                decimals: lowerable.token.decimals,
              }
            }
          >
            <Outcome view={view} chain={chain} paid={paid} />
          </ApprovalActions>
        )}
        {next && (
          <p className="next-request">
            {next.next ? (
              <Link href={`/approvals/${next.next}`}>Next request ({next.waiting} waiting)</Link>
            ) : (
              <Link href="/approvals">Back to the queue</Link>
            )}
          </p>
        )}
        {pending && <PhoneHandoff url={view.approval_url} />}
        <section aria-labelledby="details-heading">
          <h2 id="details-heading">Details</h2>
          <dl className="summary">
            <Field label="Wallet">
              {approval.credentialName} <span className="mono small">{approval.address}</span>{" "}
              <CopyButton text={approval.address} what="wallet address" />
            </Field>
            {description.kind === "sign_message" && description.signIn && (
              <SignInDetails signIn={description.signIn} walletAddress={approval.address} />
            )}
            {description.kind === "sign_message" && (
              <Field label="Message">
                <MessageText message={description.message} />
              </Field>
            )}
            {description.kind === "sign_typed_data" && <TypedDataDetails {...description} names={names} valued={pending} />}
            {description.kind === "request_allowance" && (
              <>
                <Field label="Spent by">
                  the agent&apos;s own key, address <AddressText address={description.allowance.agent} names={names} />; Agent Wallet holds
                  no key that can spend it
                </Field>
                <Field label="Chain">{description.chain.name}</Field>
                {view.permission && (
                  <Field label="Allowance">
                    <Link href="/clients">on Clients</Link> <span className="mono small">{view.permission.allowance_id}</span>
                  </Field>
                )}
              </>
            )}
            {paid && (
              <>
                <ResourceClaim url={paid.resource.url} description={null} />
                <Field label="Amount">{paid.amount}</Field>
                <Field label="Paid to">
                  <AddressText address={paid.payee} names={names} />
                </Field>
                <Field label="Paid from">
                  <Link href="/clients">your allowance for this agent</Link> <span className="mono small">{paid.allowanceId}</span>
                  {paid.agentAccount && (
                    <>
                      , through the agent&apos;s own account <span className="mono small">{paid.agentAccount}</span>, which the transaction
                      below filled with exactly this amount
                    </>
                  )}
                </Field>
              </>
            )}
            {description.kind === "send_transaction" && !paid && <TransactionDetails {...description} names={names} valued={pending} />}
            {pending && <BalanceFields userId={user.id} address={approval.address as `0x${string}`} description={description} />}
            {today && chain && (
              <Field label="Spending limit today">
                {formatEther(BigInt(today.remaining))} {chain.symbol} left of {formatEther(BigInt(today.limit))} {chain.symbol}, this
                request counted
              </Field>
            )}
            {view.signature && (
              <Field label="Signature">
                <span className="mono small">{view.signature}</span>
              </Field>
            )}
            {view.tx_hash && (
              <Field label={paid ? "Funding transaction" : "Transaction hash"}>
                <span className="mono small">{view.tx_hash}</span> <CopyButton text={view.tx_hash} what="transaction hash" />
              </Field>
            )}
            {/* a payment says one time, the one it is valid until (among its details); a no-tap one waited for no one */}
            {!paid && !payment && description.kind !== "request_allowance" && (
              <Field label="Expires">{utcDateTime(new Date(view.expires_at))}</Field>
            )}
          </dl>
        </section>
      </main>
    </>
  );
}
