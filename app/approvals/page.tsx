import type { Metadata } from "next";
import { cache, Suspense } from "react";
import Link from "next/link";
import { utcDateTime } from "@/lib/clock";
import { currentUser, requireUser } from "@/lib/auth/session";
import { listApprovals } from "@/lib/wallet/approvals";
import { contactNames } from "@/lib/wallet/address-book";
import { chipText, riskChip, type RiskChip } from "@/lib/wallet/risk";
import { requestingClient } from "@/lib/oauth/connected-clients";
import { valuedAmounts } from "@/lib/prices/holdings";
import { paidHeadlines } from "@/lib/x402/paid";
import { AppHeader } from "@/components/nav/app-header";
import { AutoRefresh } from "@/components/approvals/auto-refresh";
import { headlineAmounts, headlineOf } from "@/lib/wallet/headline";
import { NewRequestNotifier } from "@/components/approvals/new-request-notifier";
import { AmountValues } from "@/components/prices/amount-values";

/** A sign-in is checked against the sites its client names. */
const clientHosts = (userId: string, grantId: string) => requestingClient(userId, grantId).then((client) => client?.hosts ?? []);

/** One read of the list per render, shared by the title and the page. */
const approvalsOf = cache((userId: string) => listApprovals(userId, clientHosts));

type Announced = {
  id: string;
  headline: string;
  excerpt: string | null;
  chip: RiskChip | null;
  clientName: string;
  values: Promise<string[]>;
};

/**
 * The notifier, once the waiting requests' values are read (the reads the rows share, each bounded: a slow feed
 * delays a notification by at most that, and the list not at all).
 */
async function AnnouncedRequests({ pending }: { pending: Announced[] }) {
  const values = await Promise.all(pending.map((request) => request.values));
  return (
    <NewRequestNotifier
      pending={pending.map((request, index) => ({
        id: request.id,
        text: [
          request.headline,
          ...values[index],
          request.excerpt,
          request.chip && `Risk: ${chipText(request.chip)}`,
          `Asked by ${request.clientName}`,
        ]
          .filter(Boolean)
          .join(" · "),
      }))}
    />
  );
}

/** The count of waiting requests leads the tab's title, so it shows while the person is elsewhere. */
export async function generateMetadata(): Promise<Metadata> {
  const user = await currentUser();
  const waiting = user ? (await approvalsOf(user.id)).waiting : 0;
  return { title: waiting ? `(${waiting}) Approvals · Agent Wallet` : "Approvals · Agent Wallet" };
}

export default async function ApprovalsPage() {
  const user = await requireUser("/approvals");
  const [{ requests: listed, waiting }, names] = await Promise.all([approvalsOf(user.id), contactNames(user.id)]);
  // Each request says what it is in the sentence its own page opens with, with its risk as a chip, and, while it
  // waits, what its amounts are worth, streamed in after the list (a decided one's value today is not the one it was
  // decided at: docs/decisions/0018-balances-and-prices.md).
  // a no-tap x402 payment reads as the payment it made, as its page says, never as the transfer that held or funded it
  const paid = await paidHeadlines(
    user.id,
    listed.flatMap((request) =>
      request.status === "completed" && request.description.kind === "send_transaction"
        ? [{ id: request.id, chainId: request.description.chain.id }]
        : [],
    ),
    names,
  );
  const requests = listed.map((request) => ({
    ...request,
    headline: paid.get(request.id) ?? headlineOf(request.description, request.credentialName, names),
    chip: request.risk && riskChip(request.risk),
    values: valuedAmounts(request.status === "pending" ? headlineAmounts(request.description) : []),
  }));
  const pending = requests.filter((request) => request.status === "pending");
  const decided = requests.filter((request) => request.status !== "pending");
  const row = (request: (typeof requests)[number]) => (
    <li key={request.id} className="row">
      <div>
        <Link href={`/approvals/${request.id}`} className="headline">
          {request.headline}
        </Link>{" "}
        <span className="badge">{request.status}</span>
        {request.chip && (
          <>
            <span className={`badge risk ${request.chip.kind}`}>{request.chip.text}</span>
            {request.chip.more && <span className="badge risk more">{request.chip.more}</span>}
          </>
        )}
        <AmountValues values={request.values} />
        {request.excerpt && <div className="small mono">{request.excerpt}</div>}
        <div className="muted small">
          {request.credentialName} · asked by {request.clientName} · {utcDateTime(request.createdAt)}
        </div>
      </div>
    </li>
  );
  return (
    <>
      <AppHeader email={user.email} />
      <main className="queue">
        <AutoRefresh />
        {/* Until then the same button shows (nothing to announce on a first render): the heading does not move. */}
        <Suspense fallback={<NewRequestNotifier pending={[]} />}>
          <AnnouncedRequests pending={pending} />
        </Suspense>
        <h1>Approvals</h1>
        <section aria-labelledby="pending-heading">
          <h2 id="pending-heading">Waiting for you ({waiting})</h2>
          {waiting > pending.length && (
            <p className="muted small">The newest {pending.length} are listed; each page links to the next one waiting.</p>
          )}
          {pending.length ? <ul className="rows">{pending.map(row)}</ul> : <p className="muted">Nothing is waiting for your approval.</p>}
        </section>
        <section aria-labelledby="recent-heading">
          <h2 id="recent-heading">Recent</h2>
          {decided.length ? <ul className="rows">{decided.map(row)}</ul> : <p className="muted">No decided requests yet.</p>}
        </section>
      </main>
    </>
  );
}
