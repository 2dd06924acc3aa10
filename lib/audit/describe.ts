import { db } from "@/lib/db";
import type { AuditEventRow } from "./query";

/** Describing audit events for people: names for ids, a sentence per event, times in UTC (the /audit screen). */

export type Names = { clients: Map<string, string>; credentials: Map<string, string> };

/** Names to show for the clients and credentials these events mention (a removed credential has none). */
export async function namesFor(userId: string, events: AuditEventRow[]): Promise<Names> {
  const clientIds = [...new Set(events.map((event) => event.clientId).filter((id): id is string => Boolean(id)))];
  const [clients, credentials] = await Promise.all([
    db().client.findMany({ where: { id: { in: clientIds } }, select: { id: true, name: true } }),
    db().credential.findMany({ where: { userId }, select: { id: true, name: true } }),
  ]);
  return {
    clients: new Map(clients.map((client) => [client.id, client.name])),
    credentials: new Map(credentials.map((credential) => [credential.id, credential.name])),
  };
}

function text(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return null;
}

function quoted(value: unknown): string {
  const shown = text(value);
  return shown === null ? "" : ` “${shown}”`;
}

function grantSet(value: unknown, names: Names): string {
  if (!Array.isArray(value) || !value.length) return "no credentials";
  return value
    .map((entry) => {
      const { credential, mode } = (entry ?? {}) as { credential?: unknown; mode?: unknown };
      const id = text(credential) ?? "?";
      return `${names.credentials.get(id) ?? id} (${text(mode) ?? "?"})`;
    })
    .join(", ");
}

/** Any other data: its simple fields as "key: value", for event shapes this screen does not know. */
function fields(data: Record<string, unknown>): string {
  return Object.entries(data)
    .map(([key, value]) => [key, text(value) ?? (value === null ? "none" : JSON.stringify(value))] as const)
    .map(([key, value]) => `${key}: ${value.length > 80 ? `${value.slice(0, 79)}…` : value}`)
    .join(", ");
}

/** A short human sentence for an event (plain text; the page escapes it). */
export function summarizeEvent(
  event: Pick<AuditEventRow, "type" | "data">,
  names: Names = { clients: new Map(), credentials: new Map() },
): string {
  const data = event.data;
  const scope = text(data.scope);
  switch (event.type) {
    case "user.signed_up":
      return data.canSealKeys === false ? "Account created with a passkey (it cannot seal keys)" : "Account created with a passkey";
    case "user.signed_in":
      return "Signed in with a passkey";
    case "passkey.added":
      return data.canSealKeys === false ? "Passkey added (it cannot seal keys)" : "Passkey added";
    case "passkey.renamed":
      return "Passkey renamed";
    case "passkey.removed":
      return "Passkey removed";
    case "credential.connected": {
      const what = data.kind === "evm_watch" ? "Watch-only address" : "Wallet";
      return `${what}${quoted(data.name)} connected${text(data.address) ? `: ${text(data.address)}` : ""}`;
    }
    case "credential.renamed":
      return `Wallet renamed${text(data.name) ? ` to “${text(data.name)}”` : ""}`;
    case "credential.resealed":
      return "Wallet key sealed under another passkey";
    case "credential.export_requested":
      return data.reason === "recovery-kit" ? "Recovery kit requested for a wallet key" : "Wallet private key export requested";
    case "credential.removed":
      return `Wallet removed${text(data.address) ? `: ${text(data.address)}` : ""}`;
    case "client.registered": {
      const hosts = Array.isArray(data.redirectHosts) ? data.redirectHosts.map(text).filter(Boolean) : [];
      const from = text(data.metadataDocument) ? ` from its client metadata at ${text(data.metadataDocument)}` : "";
      return `Client${quoted(data.name)} registered${from}${hosts.length ? `, redirecting to ${hosts.join(", ")}` : ""}`;
    }
    case "grant.approved":
      return `Access approved${scope ? ` (${scope})` : ""} to ${grantSet(data.credentials, names)}`;
    case "grant.denied":
      return "Access denied";
    case "grant.revoked":
      return data.reason === "replay" ? "Access revoked: a used code or refresh token was presented again" : "Access revoked by you";
    case "token.revoked":
      return `Access ended by the application (it revoked its ${data.presented === "access_token" ? "access token" : "refresh token"})`;
    case "token.issued":
      return `Access token issued${scope ? ` (${scope})` : ""}${data.withRefresh ? " with a refresh token" : ""}`;
    case "token.refreshed":
      return `Tokens refreshed${scope ? ` (${scope})` : ""}`;
    case "oauth.replay_detected": {
      const presented =
        data.presented === "authorization_code"
          ? "authorization code"
          : data.presented === "refresh_token"
            ? "refresh token"
            : "credential";
      return `A used ${presented} was presented again`;
    }
    case "client.revoked":
      return `Client revoked${data.reason === "replay" ? " after a replay" : text(data.reason) ? ` (${text(data.reason)})` : ""}`;
    case "api_key.issued":
      return `API key${quoted(data.name)} issued for ${grantSet(data.credentials, names)}`;
    case "api_key.revoked":
      return `API key${quoted(data.name)} revoked`;
    case "allowance.created":
      return `Allowance created on chain ${text(data.chainId) ?? "?"}: ${text(data.summary) ?? "?"}`;
    case "allowance.spent":
      return `Paid from the allowance: ${text(data.amount) ?? "?"} to ${text(data.recipient) ?? "?"} (tx ${text(data.txHash) ?? "?"})`;
    case "allowance.revoked":
      return `Allowance revoked on chain (transaction ${text(data.txHash) ?? "?"})`;
    case "mcp.tool_called":
      return `Tool ${text(data.tool) ?? "?"}: ${text(data.outcome) ?? "?"}${text(data.error) ? ` (${text(data.error)})` : ""}`;
    case "policy.refused":
      return `A ${text(data.kind) ?? "request"} refused by the spending policy (${text(data.rule) ?? "?"})`;
    case "policy.changed":
      return "Spending limits changed";
    case "address_book.saved":
      return `Address ${text(data.address) ?? "?"} saved as${quoted(data.label)}`;
    case "address_book.removed":
      return `Address ${text(data.address) ?? "?"} removed from the address book`;
    case "step_up.refused":
      return `Refused without a matching passkey approval: ${text(data.operation) ?? "?"}`;
    case "session.ended_everywhere":
      return `Signed out everywhere${text(data.reason) ? ` (${text(data.reason)})` : ""}`;
    case "request.transition": {
      const from = text(data.from);
      const to = text(data.to) ?? text(data.status);
      const kind = text(data.kind);
      const reason = text(data.reason) ? ` (${text(data.reason)})` : "";
      if (to) return `${kind ? `${kind} request` : "Request"} ${from ? `${from} → ${to}` : to}${reason}`;
      return fields(data) || "Request changed";
    }
    default:
      return fields(data);
  }
}

/** A timestamp as people read it, in UTC (the server does not know the browser's zone). */
export function formatAuditTime(at: Date): string {
  return `${at.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}
