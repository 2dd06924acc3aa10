import type { AuditEventRow } from "@/lib/audit/query";
import { foldByRequest, formatAuditTime, summarizeEvent, summarizeRow, transactionOf, type Names } from "@/lib/audit/describe";

function Transaction({ event, names }: { event: AuditEventRow; names: Names }) {
  const transaction = transactionOf(event, names);
  if (!transaction) return null;
  return (
    <span className="audit-tx small">
      {" "}
      {transaction.url ? (
        <a href={transaction.url} rel="noreferrer" target="_blank">
          Transaction <span className="mono">{transaction.hash}</span>
        </a>
      ) : (
        <>
          Transaction <span className="mono">{transaction.hash}</span>
        </>
      )}
    </span>
  );
}

/**
 * One group of audit events (decisions, or reads) as a table that turns into cards on a phone; each row a sentence,
 * a request's events one row with its steps a tap away.
 */
export function AuditTable({ title, caption, events, names }: { title: string; caption: string; events: AuditEventRow[]; names: Names }) {
  if (!events.length) return null;
  const id = `audit-${title.toLowerCase().replace(/[^a-z]+/g, "-")}`;
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <table className="audit-table stacked-table">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">What happened</th>
            <th scope="col">Client</th>
            <th scope="col">Credential</th>
            <th scope="col">Event</th>
          </tr>
        </thead>
        <tbody>
          {foldByRequest(events).map((row) => {
            const { lead: event, steps } = row;
            return (
              <tr key={event.seq} data-seq={event.seq}>
                <td data-label="Time">
                  <time dateTime={event.at.toISOString()}>{formatAuditTime(event.at)}</time>
                  <span className="muted small"> #{event.seq}</span>
                </td>
                <td data-label="What happened" className="audit-details">
                  {summarizeRow(row, names)}
                  <Transaction event={event} names={names} />
                  {steps.length > 1 && (
                    <details className="audit-steps small">
                      <summary>{steps.length} events</summary>
                      <ol>
                        {steps.map((step) => (
                          <li key={step.seq}>
                            <time dateTime={step.at.toISOString()}>{formatAuditTime(step.at)}</time>{" "}
                            <span className="muted">#{step.seq}</span> {summarizeEvent(step, names)}{" "}
                            <span className="mono muted">{step.type}</span>
                            <Transaction event={step} names={names} />
                          </li>
                        ))}
                      </ol>
                    </details>
                  )}
                </td>
                <td data-label="Client">
                  {event.clientId ? (
                    (names.clients.get(event.clientId) ?? <span className="mono">{event.clientId}</span>)
                  ) : (
                    <span className="muted">—</span>
                  )}
                </td>
                <td data-label="Credential">
                  {event.credentialId ? (
                    (names.credentials.get(event.credentialId) ?? <span className="muted">removed ({event.credentialId})</span>)
                  ) : (
                    <span className="muted">—</span>
                  )}
                </td>
                <td data-label="Event" className="mono small audit-event">
                  {event.type}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
