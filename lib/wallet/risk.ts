// What should make a person stop before approving, from the decoded request and what this person has done before:
// a sign-in written for another site than the asking client's, an allowance (or a delegation) without limit, a contract
// they never dealt with (a token their wallet holds, which they send, is not one), a spender, delegate or recipient they
// never paid or empowered, a spender that is a contract rather than a person. The approval page shows it under the
// headline and the queue as a chip; an unlimited allowance to a spender or delegate the person does not know needs their
// explicit "I understand".
import { LRUCache } from "lru-cache";
import { erc20Abi, getAddress, type Address, type Hex } from "viem";
import { db } from "@/lib/db";
import { config } from "@/lib/config";
import { decodeCall, type TokenCall } from "./call-decoding";
import { decodeDeleGatorCall, type DeleGatorCall } from "./deleGator-calls";
import { recogniseDelegation, recogniseUserOperation } from "./deleGator-typed-data";
import { listedTokens, onChain, quickly } from "./chains";
import { payeeOf, recognisePermit } from "./permits";
import type { ContactNames } from "./address-book";
import { payloadOf, type RequestPayload } from "./request-payload";
import type { RequestDescription } from "./request-description";
import { signInMatches } from "./sign-in";

export type PartyRole = "recipient" | "spender" | "operator" | "delegate";
type Party = { role: PartyRole; address: Address };

/**
 * Whom a request deals with, from its payload alone: the contracts it calls (or whose data it signs; with the DeleGator,
 * those its calls go to) and its parties; `sent`, the token a transaction transfers out of the wallet itself (its
 * contract is the one it calls), which is not unknown when the wallet holds it.
 */
type Dealings = { chainId: number | null; contracts: Address[]; parties: Party[]; sent?: Address };

function partiesOfCall(call: TokenCall): Party[] {
  switch (call.kind) {
    case "approve":
    case "increaseAllowance":
    case "permit2Approve":
      return [{ role: "spender", address: call.spender }];
    case "setApprovalForAll":
      return call.approved ? [{ role: "operator", address: call.operator }] : [];
    default:
      return [{ role: "recipient", address: call.to }];
  }
}

/** Whom one call deals with: its recipient when it is a plain transfer, else the contract and its token call's parties. */
function callDealings(to: Address, data: Hex): Omit<Dealings, "chainId"> {
  const call = decodeCall(data);
  if (call.kind === "none") return { contracts: [], parties: [{ role: "recipient", address: to }] };
  if (call.kind === "unknown") return { contracts: [to], parties: [] };
  return { contracts: [to], parties: call.kind === "multicall" ? call.calls.flatMap(partiesOfCall) : partiesOfCall(call) };
}

/** Whom the calls the DeleGator would run deal with; none when they cannot be read (the page says so instead). */
function executionsDealings(call: DeleGatorCall): Omit<Dealings, "chainId"> {
  const each = (call.kind === "runs" ? call.runs.flatMap((run) => run.executions) : []).map(({ target, callData }) =>
    callDealings(target, callData),
  );
  return { contracts: each.flatMap((part) => part.contracts), parties: each.flatMap((part) => part.parties) };
}

export function dealingsOf(payload: RequestPayload): Dealings {
  if (payload.kind === "sign_message") return { chainId: null, contracts: [], parties: [] };
  if (payload.kind === "request_allowance") {
    const { chainId, agent, recipients } = payload.allowance;
    const payees = recipients.map((address): Party => ({ role: "recipient", address: getAddress(address) }));
    const parties: Party[] = [{ role: "delegate", address: getAddress(agent) }, ...payees];
    return { chainId, contracts: [], parties };
  }
  if (payload.kind === "sign_typed_data") {
    const { typedData } = payload;
    const domain = (typedData.domain ?? {}) as { chainId?: unknown; verifyingContract?: unknown };
    const chainId = domain.chainId === undefined ? null : Number(domain.chainId);
    // Whom a delegation or a user operation deals with needs no framework: the delegate, and the calls' own parties.
    const operation = recogniseUserOperation(typedData, null);
    if (operation) return { chainId, ...executionsDealings(operation.call) };
    const delegation = recogniseDelegation(typedData, null);
    const permit = recognisePermit(typedData);
    const contract = typeof domain.verifyingContract === "string" && /^0x[0-9a-fA-F]{40}$/.test(domain.verifyingContract);
    const payee = permit && payeeOf(permit);
    const parties: Party[] = delegation
      ? [{ role: "delegate", address: delegation.delegate }]
      : payee
        ? [{ role: "recipient", address: payee }]
        : permit
          ? [{ role: "spender", address: permit.spender }]
          : [];
    return { chainId, contracts: contract ? [getAddress(domain.verifyingContract as string)] : [], parties };
  }
  const { transaction } = payload;
  const deleGator = decodeDeleGatorCall(transaction.data);
  if (deleGator) return { chainId: transaction.chainId, ...executionsDealings(deleGator) };
  const kind = decodeCall(transaction.data).kind;
  const sent = kind === "transfer" || kind === "transferAndCall" ? { sent: transaction.to } : {};
  return { chainId: transaction.chainId, ...callDealings(transaction.to, transaction.data), ...sent };
}

export type RiskKind = "foreign_sign_in" | "unlimited" | "contract_spender" | "unknown_contract" | "new_party";
export type Risk = { kind: RiskKind; text: string };

/**
 * A request's risks, most serious first; `acknowledge` is the sentence the person must check before approving, when
 * it hands a spender they do not know (not in their address book, never used) an unlimited allowance; `unavailable`,
 * in words, what the chain did not tell in time (a risk then unchecked, never assumed away).
 */
export type RequestRisk = { risks: Risk[]; acknowledge: string | null; unavailable: string[] };

/** What the person knows: their address book, and every address an earlier completed request of theirs dealt with. */
export type KnownAddresses = { names: ContactNames; used: Set<string> };

const ROLE: Record<PartyRole, string> = { recipient: "Recipient", spender: "Spender", operator: "Operator", delegate: "Delegate" };

/**
 * What the chain and the asking client tell about a request: whether the wallet holds the token it sends (`holdsSent`),
 * and the hosts of the client that asks (null: not read; a sign-in is checked against them).
 */
export type Circumstances = { holdsSent?: boolean; askerHosts?: string[] | null };

/**
 * The risks of a request, from its description (what it grants), its dealings, what the person knows, which of
 * its spenders have code (`contracts`, lowercased) and its circumstances. Pure.
 */
export function assessRisk(
  description: RequestDescription,
  dealings: Dealings,
  known: KnownAddresses,
  contracts: Set<string>,
  { holdsSent = false, askerHosts = null }: Circumstances = {},
): Omit<RequestRisk, "unavailable"> {
  const used = (address: Address) => known.used.has(address.toLowerCase());
  const unknown = (address: Address) => !used(address) && !(address.toLowerCase() in known.names);
  const risks: Risk[] = [];
  // The one phishing pattern a message carries: a sign-in the asking client could replay on another site. A client
  // that names no site cannot be checked (the page says so), and is not accused.
  const signIn = description.kind === "sign_message" ? description.signIn : null;
  if (signIn && askerHosts?.length && !signInMatches(signIn, askerHosts)) {
    risks.push({ kind: "foreign_sign_in", text: `Sign-in for another site: ${signIn.domain} is not the asking app's` });
  }
  const call = description.kind === "send_transaction" ? description.call : null;
  const unlimited =
    ((call?.kind === "decoded" || call?.kind === "executions") && call.unlimited) ||
    (description.kind === "sign_typed_data" &&
      [description.permit, description.delegation, description.operation].some((granted) => granted?.unlimited === true));
  const empowered = dealings.parties.filter((party) => party.role !== "recipient");
  if (unlimited) risks.push({ kind: "unlimited", text: "Unlimited approval" });
  for (const party of empowered.filter((candidate) => contracts.has(candidate.address.toLowerCase()))) {
    risks.push({ kind: "contract_spender", text: `${ROLE[party.role]} is a contract, not a person` });
  }
  const held = (address: Address) => holdsSent && address.toLowerCase() === dealings.sent?.toLowerCase();
  if (dealings.contracts.some((contract) => unknown(contract) && !held(contract))) {
    risks.push({ kind: "unknown_contract", text: "Unknown contract: not in your address book, never used" });
  }
  const fresh = new Set<string>();
  for (const party of dealings.parties.filter((candidate) => !used(candidate.address))) {
    const text = `${ROLE[party.role]} never used before`;
    if (!fresh.has(text)) risks.push({ kind: "new_party", text });
    fresh.add(text);
  }
  const stranger = unlimited ? empowered.find((party) => unknown(party.address)) : undefined;
  return {
    risks,
    acknowledge: stranger
      ? `I understand: ${stranger.role === "operator" ? "an" : "a"} ${stranger.role} I do not know could take all of it`
      : null,
  };
}

/**
 * A list's chip: the most serious risk in full, and the others by their first words, so the "+2" says what it stands
 * for ("+2: Spender never used before · Unknown contract").
 */
export type RiskChip = { kind: RiskKind; text: string; more: string | null };

export function riskChip(risk: Pick<RequestRisk, "risks">): RiskChip | null {
  const [first, ...others] = risk.risks;
  if (!first) return null;
  const more = others.length ? `+${others.length}: ${others.map((entry) => entry.text.split(":")[0]).join(" · ")}` : null;
  return { kind: first.kind, text: first.text, more };
}

/** A chip as one line of text (a notification): "Unlimited approval (+1: Spender never used before)". */
export const chipText = (chip: RiskChip) => (chip.more ? `${chip.text} (${chip.more})` : chip.text);

/** How many of the person's latest completed requests count as what they have done before. */
const HISTORY = 1_000;

export async function knownAddresses(userId: string, names: ContactNames): Promise<KnownAddresses> {
  const rows = await db().agentRequest.findMany({
    where: { userId, status: "completed" },
    orderBy: { completedAt: "desc" },
    take: HISTORY,
    select: { payload: true },
  });
  const used = new Set<string>();
  for (const row of rows) {
    const { contracts, parties } = dealingsOf(payloadOf(row));
    for (const address of [...contracts, ...parties.map((party) => party.address)]) used.add(address.toLowerCase());
  }
  return { names, used };
}

/** A person's account delegated by EIP-7702 has code too: it starts with this and is still theirs. */
const DELEGATED_ACCOUNT = "0xef0100";

/**
 * Whether an address holds contract code, per chain and address: one read shared by every request that names it (a
 * queue of 200 waiting requests to one spender asks the node once), kept a minute, the most recent 10,000. A read
 * that fails is not kept.
 */
const hasCode = new LRUCache<string, Promise<boolean | undefined>>({ max: 10_000, ttl: 60_000 });

function codeAt(chainId: number, address: Address): Promise<boolean | undefined> {
  const key = `${chainId}:${address.toLowerCase()}`;
  let read = hasCode.get(key);
  if (!read) {
    read = onChain(chainId, (client) => client.getCode({ address })).then(
      (code) => code !== undefined && code !== "0x" && !code.startsWith(DELEGATED_ACCOUNT),
      () => undefined,
    );
    hasCode.set(key, read);
    void read.then((known) => known === undefined && hasCode.get(key) === read && hasCode.delete(key));
  }
  return read;
}

/** How long the queue waits for the node to say which spenders are contracts: past it, a slow node costs a chip, not the page. */
export const QUEUE_CODE_DEADLINE_MS = 150;
/** The same for one request's page and its approval, which wait longer for a chip of their own. */
const CODE_DEADLINE_MS = 1_000;

/**
 * Which of these addresses hold contract code on the chain; one that cannot be read within `deadlineMs` is not
 * claimed to be a contract (its read goes on, for the next page), and is `unread`.
 */
async function contractsAmong(chainId: number | null, addresses: Address[], deadlineMs: number) {
  if (chainId === null || !addresses.length || !config().chains.some((chain) => chain.id === chainId)) {
    return { contracts: new Set<string>(), unread: [] };
  }
  const found = await Promise.all(addresses.map((address) => quickly(() => codeAt(chainId, address), deadlineMs)));
  return {
    contracts: new Set(addresses.filter((_, index) => found[index] === true).map((address) => address.toLowerCase())),
    unread: addresses.filter((_, index) => found[index] === null || found[index] === undefined),
  };
}

/** Whether `holder` has a balance of the token it sends; false when the chain does not say so within `deadlineMs`. */
async function holds(chainId: number, token: Address, holder: Address, deadlineMs: number): Promise<boolean> {
  if (!config().chains.some((chain) => chain.id === chainId)) return false;
  const balance = await quickly(
    () => onChain(chainId, (client) => client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [holder] })),
    deadlineMs,
  );
  return balance !== null && balance > 0n;
}

/**
 * Who decides and who asks: what the person knows (`known`, read only when the request deals with someone: a message
 * names no one), the wallet that would sign (`holder`) and the hosts of the asking client (`askerHosts`, read only for
 * a sign-in).
 */
export type RiskContext = {
  known: () => Promise<KnownAddresses>;
  holder?: Address;
  askerHosts?: () => Promise<string[]>;
};

/**
 * The risks of a pending request for the person who decides it. Reads which of its spenders have code and whether the
 * wallet holds the token it sends, beside the description (which it may be given while it is still being read).
 */
export async function requestRisk(
  payload: RequestPayload,
  description: RequestDescription | Promise<RequestDescription>,
  { known, holder, askerHosts }: RiskContext,
  deadlineMs: number = CODE_DEADLINE_MS,
): Promise<RequestRisk> {
  // a token the operator lists for the chain is no unknown contract: the service itself names it
  const dealt = dealingsOf(payload);
  const listed = listedTokens(dealt.chainId);
  const dealings = { ...dealt, contracts: dealt.contracts.filter((contract) => !listed.has(contract.toLowerCase())) };
  if (!dealings.contracts.length && !dealings.parties.length) {
    const described = await description;
    const hosts = described.kind === "sign_message" && described.signIn && askerHosts ? await askerHosts() : null;
    const nobody = { names: {}, used: new Set<string>() };
    return { ...assessRisk(described, dealings, nobody, new Set(), { askerHosts: hosts }), unavailable: [] };
  }
  const empowered = dealings.parties.filter((party) => party.role !== "recipient").map((party) => party.address);
  const [described, knownNow, { contracts, unread }, holdsSent] = await Promise.all([
    description,
    known(),
    contractsAmong(dealings.chainId, empowered, deadlineMs),
    dealings.sent && holder && dealings.chainId !== null ? holds(dealings.chainId, dealings.sent, holder, deadlineMs) : false,
  ]);
  const risk = assessRisk(described, dealings, knownNow, contracts, { holdsSent });
  const role = (address: Address) => ROLE[dealings.parties.find((party) => party.address === address)!.role].toLowerCase();
  return { ...risk, unavailable: unread.map((address) => `whether the ${role(address)} ${address} is a contract`) };
}
