import Link from "next/link";
import { requireUser } from "@/lib/auth/session";
import { AUDIT_EVENT_TYPES } from "@/lib/audit";
import { auditIntegrityFor } from "@/lib/audit/integrity";
import { auditChoices, auditQueryString, listAuditEvents, parseAuditQuery } from "@/lib/audit/query";
import { AUDIT_TIME_ZONE, isRead, namesFor } from "@/lib/audit/describe";
import { contactNames } from "@/lib/wallet/address-book";
import { tokenMetadata } from "@/lib/wallet/token-metadata";
import { AuditTable } from "@/components/audit/audit-table";
import { AppHeader } from "@/components/nav/app-header";

/** How long the page waits for a token's symbol and decimals; one not read by then is named by its address. */
const TOKEN_READ_MS = 1000;

async function tokenNamed(chainId: number, token: `0x${string}`) {
  const metadata = await tokenMetadata(chainId, token, TOKEN_READ_MS);
  return metadata.standard === "erc20" ? metadata : null;
}

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

export default async function AuditPage({ searchParams }: Props) {
  const user = await requireUser("/audit");
  const query = parseAuditQuery(await searchParams);
  const { values } = query;
  const [choices, chain, list, contacts] = await Promise.all([
    auditChoices(user.id),
    auditIntegrityFor(user.id),
    query.errors.length ? null : listAuditEvents(user.id, query.filters, query.page),
    contactNames(user.id),
  ]);
  const names = list ? await namesFor(user.id, list.events, contacts, tokenNamed) : null;
  const filtered = Object.values(values).some(Boolean);

  return (
    <>
      <AppHeader email={user.email} />
      <main className="audit">
        <h1>Audit log</h1>
        {chain.ok ? (
          <p className="audit-chain ok" role="status">
            Audit chain verified: your {chain.ownEvents} events are intact
          </p>
        ) : (
          <p className="audit-chain broken" role="alert">
            Audit chain broken at event {chain.brokenAt}: {chain.reason}
          </p>
        )}

        <form method="get" action="/audit" className="audit-filters card">
          <div>
            <label htmlFor="audit-type">Event type</label>
            <select id="audit-type" name="type" defaultValue={values.type}>
              <option value="">All events</option>
              {AUDIT_EVENT_TYPES.map((type) => (
                <option key={type} value={type}>
                  {type}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label htmlFor="audit-client">Client</label>
            <select id="audit-client" name="client" defaultValue={values.client}>
              <option value="">All clients</option>
              {choices.clients.map((client) => (
                <option key={client.id} value={client.id}>
                  {client.kind === "api_key" ? `${client.name} (API key)` : client.name}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label htmlFor="audit-credential">Credential</label>
            <select id="audit-credential" name="credential" defaultValue={values.credential}>
              <option value="">All credentials</option>
              {choices.credentials.map((credential) => (
                <option key={credential.id} value={credential.id}>
                  {credential.name}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label htmlFor="audit-from">From</label>
            <input id="audit-from" type="date" name="from" defaultValue={values.from} />
          </div>
          <div>
            <label htmlFor="audit-to">To</label>
            <input id="audit-to" type="date" name="to" defaultValue={values.to} />
          </div>
          <div className="actions">
            <button type="submit" className="primary">
              Filter
            </button>
            {filtered && <Link href="/audit">Clear filters</Link>}
          </div>
        </form>

        {query.errors.length > 0 && (
          <div role="alert" className="error">
            {query.errors.map((error) => (
              <p key={error}>{error}</p>
            ))}
          </div>
        )}

        {list && names && (
          <>
            <p className="audit-export">
              <a href={`/api/audit/export${auditQueryString(values)}`}>Export JSON Lines</a>{" "}
              <span className="muted small">{filtered ? "(the events that match these filters)" : "(all your events)"}</span>
            </p>
            {list.events.length === 0 ? (
              <p className="muted">{filtered ? "No events match these filters." : "No events here."}</p>
            ) : (
              <>
                <p className="muted small">All times are in {AUDIT_TIME_ZONE}.</p>
                <AuditTable
                  title="Decisions and changes"
                  caption="What was decided or changed, newest first"
                  events={list.events.filter((event) => !isRead(event))}
                  names={names}
                />
                <AuditTable
                  title="Reads by agents"
                  caption="What agents looked at, newest first"
                  events={list.events.filter(isRead)}
                  names={names}
                />
              </>
            )}
            <nav className="audit-paging actions" aria-label="Pages">
              {list.newer !== null && <Link href={`/audit${auditQueryString(values, { after: list.newer })}`}>Newer</Link>}
              {list.older !== null && <Link href={`/audit${auditQueryString(values, { before: list.older })}`}>Next page</Link>}
            </nav>
          </>
        )}
      </main>
    </>
  );
}
