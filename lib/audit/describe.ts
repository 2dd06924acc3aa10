import { formatEther, formatUnits, getAddress, type Address } from "viem";
import { db } from "@/lib/db";
import { config } from "@/lib/config";
import { TOOLS } from "@/contract";
import { parseAuditData, type AuditEventRow } from "./query";

/**
 * Describing audit events for people (the /audit screen): names for ids, a sentence per event built from the
 * stored events only, reads apart from decisions, times in UTC.
 */

/**
 * What the events of one request say about it: its first names the payment, a later one its transaction, the person's
 * decision the sentence their approval page showed (`words`; decisions recorded before it have none).
 */
type RequestFacts = {
  kind?: string;
  /** what a DeleGator call runs (lib/wallet/deleGator-calls.ts auditedRuns) */
  runs?: Runs;
  chainId?: number;
  recipient?: string;
  value?: string;
  call?: boolean;
  txHash?: string;
  words?: string;
  /** the allowance that paid it without a tap */
  allowanceId?: string;
};

type Runs = {
  functionName?: unknown;
  unreadable?: unknown;
  executions?: { from?: unknown; recipient?: unknown; value?: unknown; call?: unknown }[];
  total?: unknown;
};

export type Names = {
  clients: Map<string, string>;
  credentials: Map<string, string>;
  /** address book names by lowercased address, for recipients */
  contacts?: Record<string, string>;
  /** by request id, from the request's own audit events */
  requests?: Map<string, RequestFacts>;
  /** by allowance id: its chain (an allowance's events name their payments' tokens, not the chain) */
  allowanceChains?: Map<string, number>;
  /** a token's symbol and decimals by `chainId:address` (lowercased), for the amounts its payments name */
  tokens?: Map<string, { symbol: string; decimals: number }>;
};

type Described = Pick<AuditEventRow, "type" | "data"> & Partial<Pick<AuditEventRow, "clientId" | "requestId">>;

function requestFacts(events: Pick<AuditEventRow, "data">[]): RequestFacts {
  const facts: RequestFacts = {};
  for (const { data } of events) {
    if (!facts.kind && text(data.kind)) facts.kind = text(data.kind)!;
    if (typeof data.chainId === "number") facts.chainId = data.chainId;
    if (typeof data.recipient === "string") facts.recipient = data.recipient;
    if (typeof data.value === "string" && /^\d+$/.test(data.value)) facts.value = data.value;
    if (typeof data.call === "boolean") facts.call = data.call;
    if (typeof data.txHash === "string") facts.txHash = data.txHash;
    if (typeof data.words === "string") facts.words = data.words;
    if (typeof data.allowanceId === "string") facts.allowanceId = data.allowanceId;
    if (data.runs && typeof data.runs === "object") facts.runs = data.runs as Runs;
  }
  return facts;
}

/**
 * Names to show for the clients, credentials, recipients and requests these events mention (a removed credential has
 * none); `contacts`, the person's address book names, come from the caller.
 */
export async function namesFor(
  userId: string,
  events: AuditEventRow[],
  contacts: Record<string, string>,
  readToken: TokenReader = async () => null,
): Promise<Names> {
  const clientIds = [...new Set(events.map((event) => event.clientId).filter((id): id is string => Boolean(id)))];
  const requestIds = [...new Set(events.map((event) => event.requestId).filter((id): id is string => Boolean(id)))];
  const allowanceIds = [...new Set(events.flatMap((event) => text(event.data.allowanceId) ?? []))];
  const [clients, credentials, requestEvents, allowances] = await Promise.all([
    db().client.findMany({ where: { id: { in: clientIds } }, select: { id: true, name: true } }),
    db().credential.findMany({ where: { userId }, select: { id: true, name: true } }),
    db().auditEvent.findMany({
      where: { userId, type: "request.transition", requestId: { in: requestIds } },
      orderBy: { seq: "asc" },
      select: { requestId: true, data: true },
    }),
    db().allowance.findMany({ where: { id: { in: allowanceIds }, userId }, select: { id: true, chainId: true } }),
  ]);
  const allowanceChains = new Map(allowances.map((allowance) => [allowance.id, allowance.chainId]));
  const byRequest = new Map<string, Pick<AuditEventRow, "data">[]>();
  for (const event of requestEvents) {
    const list = byRequest.get(event.requestId!) ?? [];
    list.push({ data: parseAuditData(event.data) });
    byRequest.set(event.requestId!, list);
  }
  return {
    clients: new Map(clients.map((client) => [client.id, client.name])),
    credentials: new Map(credentials.map((credential) => [credential.id, credential.name])),
    contacts,
    requests: new Map([...byRequest].map(([id, list]) => [id, requestFacts(list)])),
    allowanceChains,
    tokens: await tokenNames(events, allowanceChains, readToken),
  };
}

/** "500000 of token 0x…", as allowance.spent records a token amount: the amount in base units and the token. */
const TOKEN_AMOUNT = /^(\d+) of token (0x[0-9a-fA-F]{40})$/;
/** A token's symbol and decimals, from the caller (the page reads the chain); null when it could not say. */
export type TokenReader = (chainId: number, token: Address) => Promise<{ symbol: string; decimals: number } | null>;

/** The symbol and decimals of each token the page's payments name, read at once. */
async function tokenNames(events: AuditEventRow[], chains: Map<string, number>, readToken: TokenReader) {
  const wanted = new Map<string, { chainId: number; token: Address }>();
  for (const event of events) {
    const chainId = chains.get(text(event.data.allowanceId) ?? "");
    const token = TOKEN_AMOUNT.exec(text(event.data.amount) ?? "")?.[2];
    if (chainId !== undefined && token) wanted.set(`${chainId}:${token.toLowerCase()}`, { chainId, token: getAddress(token) });
  }
  const read = await Promise.all([...wanted].map(async ([key, { chainId, token }]) => [key, await readToken(chainId, token)] as const));
  return new Map(read.flatMap(([key, named]) => (named ? [[key, named] as const] : [])));
}

/** A payment's amount as the person reads it: "0.5 USDC", "0.1 ETH"; a token not read, in its base units. */
function paidAmount(data: Record<string, unknown>, names: Names): string {
  const recorded = text(data.amount);
  if (!recorded) return "an amount not recorded";
  const chainId = names.allowanceChains?.get(text(data.allowanceId) ?? "");
  const token = TOKEN_AMOUNT.exec(recorded);
  if (token) {
    const named = chainId === undefined ? undefined : names.tokens?.get(`${chainId}:${token[2].toLowerCase()}`);
    return named ? `${formatUnits(BigInt(token[1]), named.decimals)} ${named.symbol}` : `${token[1]} base units of the token ${token[2]}`;
  }
  const coin = /^(.+) of the chain's coin$/.exec(recorded);
  if (coin) {
    const symbol = config().chains.find((chain) => chain.id === chainId)?.symbol;
    return symbol ? `${coin[1]} ${symbol}` : `${coin[1]} of the chain's coin`;
  }
  return recorded;
}

/** A chain by its name, as configured ("chain 31337" when it no longer is). */
function chainName(chainId: unknown): string {
  const id = typeof chainId === "number" ? chainId : Number(text(chainId));
  return config().chains.find((chain) => chain.id === id)?.name ?? (Number.isFinite(id) ? `chain ${id}` : "a chain no longer configured");
}

/** A payment from an allowance, in the person's words: what, to whom, for what, and where it stands on chain. */
function spentWords(data: Record<string, unknown>, names: Names): string {
  const recipient = text(data.recipient);
  const to = recipient ? (names.contacts?.[recipient.toLowerCase()] ?? recipient) : "a payee not recorded";
  const paid = `${paidAmount(data, names)} to ${to}`;
  if (data.kind === "x402") {
    const resource = text(data.resource);
    // signed, not sent: the merchant's facilitator settles it on chain later (or never, and then its hold is released)
    const what = `Paid ${paid}${resource ? ` for ${resource}` : ""}`;
    return `${what} from the allowance, without a tap: signed for the merchant, who settles it on chain`;
  }
  if (data.outcome === "reverted") return `A payment of ${paid} from the allowance was refused by the chain: nothing moved`;
  // read from the chain: the agent's own key (or a sub-agent's, from a slice) sent it, and paid its fee
  if (text(data.by)) return `Paid ${paid} from the allowance, sent by the agent's own key ${text(data.by)}`;
  return `Paid ${paid} from the allowance, without a tap${text(data.txHash) ? "" : ": its transaction is not known yet"}`;
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
      const id = text(credential);
      const named = id === null ? "a wallet not recorded" : (names.credentials.get(id) ?? id);
      return `${named} (${text(mode) ?? "mode not recorded"})`;
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
export function summarizeEvent(event: Described, names: Names = { clients: new Map(), credentials: new Map() }): string {
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
    case "allowance.created": {
      // its terms are on Clients, as signed; the event records what the chain was told, not the sentence
      const above = data.overLimit === "ask" ? "anything above it comes to you to approve" : "anything above it is refused";
      return `Allowance signed with your passkey on ${chainName(data.chainId)}: the chain enforces it, ${above}`;
    }
    case "allowance.spent":
      return spentWords(data, names);
    case "allowance.stopped": {
      const onChain = data.expired
        ? "it had already expired, so nothing is sent to the chain"
        : data.revocationStored
          ? "its disabling on chain, signed with it, is being sent"
          : "still live on chain until you sign to disable it on /clients";
      return `Allowance stopped here${text(data.reason) ? `, ${text(data.reason)}` : ""}: ${onChain}`;
    }
    case "allowance.suspended":
      return data.attention === "code_changed"
        ? "Allowance paused: the wallet's address now runs other code than the DeleGator; review it on /clients"
        : `Allowance paused: a transaction the relayer sent for it reverted${
            text(data.txHash) ? ` (tx ${text(data.txHash)})` : ""
          }; review it on /clients`;
    case "allowance.resumed":
      return "Allowance resumed: it pays again without a tap";
    case "allowance.revoked":
      return data.expired
        ? "Allowance ended: it had expired, nothing was sent to the chain"
        : text(data.txHash)
          ? "Allowance revoked on chain"
          : "Allowance revoked: its transaction on chain is not known yet";
    case "allowance.sliced":
      return `The agent passed a slice of its allowance on to the key ${text(data.delegate) ?? "not recorded"}, within it (on /clients)`;
    case "agent_account.returned":
      // sent with its ledger row; reconciliation broadcasts it again until it lands (lib/allowances/agent-account.ts)
      return data.live
        ? `${paidAmount(data, names)} sent back to your wallet from the agent's account of an allowance that goes on`
        : `${paidAmount(data, names)} sent back to your wallet from the agent's account of an allowance that stopped`;
    case "mcp.tool_called": {
      const outcome = `${text(data.outcome) ?? "outcome not recorded"}${text(data.error) ? ` (${text(data.error)})` : ""}`;
      const words = READ_WORDS[text(data.tool) ?? ""];
      if (!words || !isRead(event)) return `Tool ${text(data.tool) ?? "not recorded"}: ${outcome}`;
      const who = (event.clientId && names.clients.get(event.clientId)) || "An agent";
      return `${who} ${words}${data.outcome === "ok" ? "" : `: ${outcome}`}`;
    }
    case "policy.refused":
      // The words the agent read, when the event carries them; older events name the rule.
      return text(data.words)
        ? `Refused by the spending policy: ${text(data.words)}`
        : `A ${text(data.kind) ?? "request"} refused by the spending policy (${text(data.rule) ?? "rule not recorded"})`;
    case "policy.changed":
      return "Spending limits changed";
    case "address_book.saved":
      return `Address ${text(data.address) ?? "(not recorded)"} saved as${quoted(data.label)}`;
    case "address_book.removed":
      return `Address ${text(data.address) ?? "(not recorded)"} removed from the address book`;
    case "step_up.refused":
      return `Refused without a matching passkey approval${text(data.operation) ? `: ${text(data.operation)}` : ""}`;
    case "session.ended_everywhere":
      return `Signed out everywhere${text(data.reason) ? ` (${text(data.reason)})` : ""}`;
    case "request.transition":
      return requestSentence(event, names) ?? (fields(data) || "Request changed");
    default:
      return fields(data);
  }
}

/** A sentence as the middle of another: "Allow spending of …" → "allow spending of …". */
const continued = (sentence: string) => sentence.charAt(0).toLowerCase() + sentence.slice(1);

/**
 * What a request asks, as the one who asked it would say it ("send 0.1 ETH to Alice") and once done ("Sent …"): in
 * the words the person decided on when they were recorded (a plain send reads as well from its own facts), else
 * from the facts its events name.
 */
function requestWords(facts: RequestFacts, names: Names): { ask: string; done: string } {
  const plainSend = facts.kind === "send_transaction" && facts.call === false;
  if (facts.words && !plainSend) return { ask: continued(facts.words), done: `Done: ${continued(facts.words)}` };
  if (facts.kind === "send_transaction" && facts.value !== undefined && facts.chainId !== undefined && facts.recipient) {
    const chain = config().chains.find((candidate) => candidate.id === facts.chainId);
    const amountOf = (value: string) =>
      chain ? `${formatEther(BigInt(value))} ${chain.symbol}` : `${value} wei on chain ${facts.chainId}`;
    const nameOf = (address: string) => names.contacts?.[address.toLowerCase()] ?? address;
    const to = nameOf(facts.recipient);
    if (facts.runs) return runsWords(facts.runs, to, amountOf, nameOf);
    const amount = amountOf(facts.value);
    if (facts.call) return { ask: `call the contract ${to} with ${amount}`, done: `Called the contract ${to} with ${amount}` };
    return { ask: `send ${amount} to ${to}`, done: `Sent ${amount} to ${to}` };
  }
  if (facts.kind === "send_transaction") return { ask: "send a transaction", done: "Sent a transaction" };
  if (facts.kind === "sign_message") return { ask: "sign a message", done: "Signed a message" };
  if (facts.kind === "sign_typed_data") return { ask: "sign typed data", done: "Signed typed data" };
  if (facts.kind === "request_allowance")
    return { ask: "give an allowance to a key it holds", done: "Gave an allowance to a key the agent holds" };
  return { ask: "act for you", done: "Done" };
}

/**
 * A DeleGator call in words: what each of its executions sends or calls (from whose account, when a delegation's), or
 * why they cannot be read, never "a call to the wallet itself".
 */
function runsWords(
  runs: Runs,
  to: string,
  amountOf: (value: string) => string,
  nameOf: (address: string) => string,
): { ask: string; done: string } {
  const functionName = text(runs.functionName) ?? "a function";
  if (text(runs.unreadable)) {
    const words = `call ${functionName} on ${to}, whose effect cannot be read (${text(runs.unreadable)})`;
    return { ask: words, done: `Done: ${words}` };
  }
  const steps = (runs.executions ?? []).flatMap(({ from, recipient, value, call }) => {
    if (typeof recipient !== "string" || typeof value !== "string" || !/^\d+$/.test(value)) return [];
    const amount = amountOf(value);
    const what = call === true ? `call the contract ${nameOf(recipient)} with ${amount}` : `send ${amount} to ${nameOf(recipient)}`;
    return [typeof from === "string" ? `${what} from ${nameOf(from)}` : what];
  });
  const total = typeof runs.total === "number" ? runs.total : steps.length;
  const more = total > steps.length ? `, and ${total - steps.length} more` : "";
  const words = `run through ${functionName} on ${to}: ${steps.join("; ") || "nothing"}${more}`;
  return { ask: words, done: `Ran through ${functionName} on ${to}: ${steps.join("; ") || "nothing"}${more}` };
}

const BY_PASSKEY = "approved by you with a passkey";

/** What the person decided beyond "yes": an allowance they lowered before signing, a risk they confirmed. */
function decisionWords(data: Record<string, unknown>): string {
  const lowered = (data.lowered ?? {}) as { asked?: unknown; signed?: unknown };
  const asked = text(lowered.asked);
  const signed = text(lowered.signed);
  const acknowledged = text(data.acknowledged);
  const lowering = asked && signed ? `; you lowered the allowance from ${asked} to ${signed}` : "";
  return `${lowering}${acknowledged ? `; you confirmed: “${acknowledged}”` : ""}`;
}

/** A request's step as a sentence; an approval always took the person's passkey (lib/wallet/approvals.ts). */
function requestSentence(event: Described, names: Names): string | null {
  const { data } = event;
  const to = text(data.to) ?? text(data.status);
  if (!to) return null;
  const facts = { ...(event.requestId ? names.requests?.get(event.requestId) : undefined), ...requestFacts([event]) };
  const { ask, done } = requestWords(facts, names);
  const reason = text(data.reason);
  const sending = facts.kind === "send_transaction";
  switch (to) {
    case "pending":
      return `${(event.clientId && names.clients.get(event.clientId)) || "An agent"} asked to ${ask}`;
    case "approved":
      return `${sending || facts.words ? `Approved by you with a passkey: ${ask}` : `${done} — ${BY_PASSKEY}`}${decisionWords(data)}`;
    case "submitted":
      if (facts.allowanceId) return `${done} from the allowance, without a tap: waiting for a block`;
      return `${done} — ${BY_PASSKEY}`;
    case "completed":
      if (facts.allowanceId) return `${done} from the allowance, without a tap: included in a block`;
      return sending ? `${done}: included in a block` : `${done}: the agent has the signature`;
    case "failed":
      return `Failed to ${ask}${reason ? `: ${reason}` : ""}`;
    case "rejected":
      return `Rejected: ${ask}`;
    case "expired":
      return `Expired without a decision: ${ask}`;
    case "cancelled":
      return `Cancelled${reason ? ` (${reason})` : ""}: ${ask}`;
    default:
      return `${ask}: ${to}`;
  }
}

/** The transaction an event names, linked on its chain's explorer when the chain has one (never a made-up address). */
export function transactionOf(event: Described, names: Names): { hash: string; url: string | null } | null {
  const facts = event.type === "request.transition" && event.requestId ? names.requests?.get(event.requestId) : undefined;
  const status = text(event.data.to);
  const hash = text(event.data.txHash) ?? (status === "completed" || status === "failed" ? facts?.txHash : undefined);
  if (!hash) return null;
  const chainId = typeof event.data.chainId === "number" ? event.data.chainId : facts?.chainId;
  const explorer = config().chains.find((chain) => chain.id === chainId)?.explorerUrl;
  return { hash, url: explorer ? `${explorer.replace(/\/$/, "")}/tx/${hash}` : null };
}

/** A row of the person's view: an event, or a request's events (newest first) under the step that says where it stands. */
export type AuditRow = { lead: AuditEventRow; steps: AuditEventRow[] };

/**
 * The person's view of a page of events, newest first: a request's events are one row (its agent's call, the asking,
 * the decision and what came of it read as one "Rejected: …", not three rows for one "no"), led by its latest
 * transition, in the place of its newest event; every other event is a row of its own. Nothing is dropped: the steps
 * stay listed under their row, and the hash chain and the export keep every event as it was recorded.
 */
export function foldByRequest(events: AuditEventRow[]): AuditRow[] {
  const rows: AuditRow[] = [];
  const byRequest = new Map<string, AuditRow>();
  for (const event of events) {
    const row = event.requestId ? byRequest.get(event.requestId) : undefined;
    if (row) {
      row.steps.push(event);
      continue;
    }
    const started = { lead: event, steps: [event] };
    rows.push(started);
    if (event.requestId) byRequest.set(event.requestId, started);
  }
  return rows.map((row) => ({ ...row, lead: row.steps.find((step) => step.type === "request.transition") ?? row.steps[0] }));
}

/** What came of an approval, after its sentence: "included in a block". */
function outcomeWords(event: AuditRow["lead"]): string | null {
  const reason = text(event.data.reason);
  switch (text(event.data.to)) {
    case "submitted":
      return "sent to the network";
    case "completed":
      if (event.data.kind === "request_allowance") return "the agent has the signed allowance";
      return event.data.kind === "send_transaction" ? "included in a block" : "the agent has the signature";
    case "failed":
      return `failed${reason ? `: ${reason}` : ""}`;
    default:
      return null;
  }
}

/**
 * A row's sentence: an event's own, or for a request the person decided, their decision in full (what, and what
 * they lowered or confirmed) and then what came of it: "Approved by you with a passkey: send 0.1 ETH to Alice · included
 * in a block".
 */
export function summarizeRow({ lead, steps }: AuditRow, names: Names = { clients: new Map(), credentials: new Map() }): string {
  const decision = steps.find((step) => step.type === "request.transition" && ["approved", "rejected"].includes(text(step.data.to) ?? ""));
  if (!decision || decision === lead) return summarizeEvent(lead, names);
  const outcome = outcomeWords(lead);
  return `${summarizeEvent(decision, names)}${outcome ? ` · ${outcome}` : ""}`;
}

/** Which tool calls only read (an agent looking), shown apart from what changed or was decided. */
export function isRead(event: Pick<AuditEventRow, "type" | "data">): boolean {
  const tool = text(event.data.tool);
  return (
    event.type === "mcp.tool_called" &&
    tool !== null &&
    tool in TOOLS &&
    !TOOLS[tool as keyof typeof TOOLS].sensitive &&
    tool !== "cancel_request"
  );
}

const READ_WORDS: Record<string, string> = {
  list_credentials: "listed your wallets",
  get_balance: "read a balance",
  get_request: "checked on a request",
  list_requests: "listed its requests",
  get_policy: "read its spending limits",
};

/** The one time zone of the page, named once there; each time is shown in it without repeating the name. */
export const AUDIT_TIME_ZONE = "UTC";

/** A timestamp as people read it, in UTC (the server does not know the browser's zone). */
export function formatAuditTime(at: Date): string {
  return at.toISOString().slice(0, 19).replace("T", " ");
}
