import type { Metadata } from "next";
import { cache } from "react";
import Link from "next/link";
import { currentUser, requireUser } from "@/lib/auth/session";
import { listApprovals } from "@/lib/wallet/approvals";
import { AppHeader } from "@/components/nav/app-header";
import { AutoRefresh } from "@/components/approvals/auto-refresh";
import { NewRequestNotifier } from "@/components/approvals/new-request-notifier";

const KIND_LABEL: Record<string, string> = {
  sign_message: "Sign a message",
  sign_typed_data: "Sign typed data",
  send_transaction: "Send a transaction",
};

/** One read of the list per render, shared by the title and the page. */
const approvalsOf = cache(listApprovals);

/** The count of waiting requests leads the tab's title, so it shows while the person is elsewhere. */
export async function generateMetadata(): Promise<Metadata> {
  const user = await currentUser();
  const waiting = user ? (await approvalsOf(user.id)).filter((request) => request.status === "pending").length : 0;
  return { title: waiting ? `(${waiting}) Approvals · Agent Wallet` : "Approvals · Agent Wallet" };
}

export default async function ApprovalsPage() {
  const user = await requireUser("/approvals");
  const requests = await approvalsOf(user.id);
  const pending = requests.filter((request) => request.status === "pending");
  const decided = requests.filter((request) => request.status !== "pending");
  const row = (request: (typeof requests)[number]) => (
    <li key={request.id} className="row">
      <div>
        <Link href={`/approvals/${request.id}`}>
          <strong>{KIND_LABEL[request.kind] ?? request.kind}</strong>
        </Link>{" "}
        <span className="badge">{request.status}</span>
        <div className="small">
          {request.clientName} · {request.credentialName}
        </div>
        <div className="small mono">{request.summary}</div>
        <div className="muted small">{request.createdAt.toLocaleString()}</div>
      </div>
    </li>
  );
  return (
    <>
      <AppHeader email={user.email} />
      <main>
        <AutoRefresh />
        <NewRequestNotifier
          pending={pending.map((request) => ({
            id: request.id,
            text: `${request.clientName} · ${KIND_LABEL[request.kind] ?? request.kind}: ${request.summary}`,
          }))}
        />
        <h1>Approvals</h1>
        <section aria-labelledby="pending-heading">
          <h2 id="pending-heading">Waiting for you ({pending.length})</h2>
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
