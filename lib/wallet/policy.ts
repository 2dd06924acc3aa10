// Spending policies: the person's rules per (grant, credential), checked before a request exists, so an agent
// that breaks one never reaches the person's approval queue. A policy can only refuse: every request it allows
// still waits for the person's passkey. Rolling caps count every request that may still spend — pending,
// approved, submitted, completed — from the moment it is created, and stop counting it once it is rejected,
// expired, cancelled or failed. The check and the creation run under one lock per (grant, credential), so
// concurrent requests cannot all squeeze under a cap (docs/policies.md).
import { getAddress, type Address, type Hex, type TypedDataDefinition } from "viem";
import { db, usesPostgres } from "@/lib/db";
import { LRUCache } from "lru-cache";
import { required, rowsOf, runTransaction, unanswered, type TransactionScript } from "@/lib/db/transaction-script";
import { recordAudit } from "@/lib/audit";
import { systemClock, type Clock } from "@/lib/clock";
import { config } from "@/lib/config";
import { canonicalJson, randomId } from "@/lib/crypto";
import { AppError, NotFoundError } from "@/lib/http/errors";
import { tokenAsset } from "./token-metadata";
import { policySchema, type Policy, type PolicyView } from "@/contract";
import { allowanceFramework } from "./chains";
import { frameworkContracts, type Framework } from "@/lib/wallet/delegation-framework";
import { decodeCall, isBatch, isUnlimitedAmount, type TokenCall } from "./call-decoding";
import { decodeDeleGatorCall, type DeleGatorCall } from "./deleGator-calls";
import { recogniseDelegation, recogniseUserOperation, type Bound } from "./deleGator-typed-data";
import { payeeOf, recognisePermit } from "./permits";
import type { AgentContext } from "./agent-context";
import { payloadDigest, type PreparedTransaction, type RequestPayload } from "./request-payload";
import { keccak256 } from "./keccak";
import { grantStaysLive, insertRequest, keyStaysFree, RequestError } from "./request-lifecycle";
import type { KeyedRequest } from "./idempotency";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

type TokenAmount = { chainId: number | null; token: Address; amount: bigint };

/** A contract a request calls, and the function; `readable` false when the decoder cannot say what it does with tokens. */
type ContractCall = { contract: Address; selector: Hex; readable: boolean };

/** What a request would do, in the terms the rules speak of. */
export type RequestFacts = {
  kind: RequestPayload["kind"];
  /** the transaction's chain, or the typed data's domain chainId */
  chainId: number | null;
  /**
   * native value sent, in wei: a transaction's, with what each call it runs through the DeleGator sends; the most a
   * delegation could ever move, or what a user operation's calls send and the most it pays for gas
   */
  native: bigint;
  /** the contracts called and the functions: a transaction's with calldata, and each call the DeleGator would run */
  calls: ContractCall[];
  /**
   * who receives, spends or operates: each transfer's recipient, approval's spender, the plain transfer's `to`, a
   * delegation's delegate
   */
  counterparties: Address[];
  /** ERC-20-style amounts moved or allowed, one a token: a token call's on the contract called, a permit's on each permitted token */
  tokens: TokenAmount[];
  unlimitedApproval: boolean;
  /**
   * false when the decoder cannot say what the request does with tokens: an unknown call, a batch not decoded
   * whole, typed data that is no permit or authorization it knows. Rules about tokens then fail closed.
   */
  readable: boolean;
  /** a batch of calls (a multicall, a Multicall3 aggregate, several executions of the DeleGator), decoded whole or not */
  batch: boolean;
  /** why what the request may move cannot be counted against native caps, and token caps: refused under any such cap */
  uncounted: { native: string | null; tokens: string | null };
  domain: { verifyingContract: string | null; name: string | null } | null;
};

/** What an agent asks for, before anything is prepared on the chain: all the rules need to judge it. */
export type Intent =
  | Exclude<RequestPayload, { kind: "send_transaction" }>
  | { kind: "send_transaction"; transaction: Pick<PreparedTransaction, "chainId" | "to" | "value" | "data"> };

/** The Delegation Framework on a chain, to read caveats by their enforcers and to know its own contracts. */
export type FrameworkOf = (chainId: number) => Framework | null;

type Moves = Pick<RequestFacts, "counterparties" | "tokens" | "unlimitedApproval">;

/** Who a decoded token call involves and what it moves or allows, on `contract` (or, for Permit2, the token named). */
function movesOf(call: TokenCall, contract: Address, chainId: number | null): Moves {
  const moved = (amount: bigint, token: Address = contract) => [{ chainId, token, amount }];
  switch (call.kind) {
    case "transfer":
    case "transferFrom":
    case "transferAndCall":
      return { counterparties: [call.to], tokens: moved(call.amount), unlimitedApproval: false };
    case "approve":
    case "increaseAllowance":
      return { counterparties: [call.spender], tokens: moved(call.amount), unlimitedApproval: isUnlimitedAmount(call.amount) };
    case "permit2Approve":
      return { counterparties: [call.spender], tokens: moved(call.amount, call.token), unlimitedApproval: isUnlimitedAmount(call.amount) };
    case "safeTransferFrom":
    case "safeTransferFrom1155":
    case "safeBatchTransferFrom":
      return { counterparties: [call.to], tokens: [], unlimitedApproval: false };
    case "setApprovalForAll":
      return { counterparties: [call.operator], tokens: [], unlimitedApproval: call.approved };
  }
}

/** Amounts of the same token (a multicall's transfers) added up: a request holds one amount a token. */
function summed(tokens: TokenAmount[]): TokenAmount[] {
  const byToken = new Map<string, TokenAmount>();
  for (const move of tokens) {
    const key = `${move.chainId}:${move.token.toLowerCase()}`;
    const earlier = byToken.get(key);
    byToken.set(key, earlier ? { ...earlier, amount: earlier.amount + move.amount } : move);
  }
  return [...byToken.values()];
}

/** What calls do, in the rules' terms: those of a transaction, or those the DeleGator runs. */
type CallFacts = Pick<RequestFacts, "native" | "calls" | "counterparties" | "tokens" | "unlimitedApproval" | "batch">;

const NO_CALL: CallFacts = { native: 0n, calls: [], counterparties: [], tokens: [], unlimitedApproval: false, batch: false };

/** One call from the wallet: `value` wei to `to` with `data` (a plain transfer when there is none). */
function callFacts(to: Address, value: bigint, data: Hex, chainId: number | null): CallFacts {
  const call = decodeCall(data);
  if (call.kind === "none") return { ...NO_CALL, native: value, counterparties: [to] };
  const called = {
    ...NO_CALL,
    native: value,
    calls: [{ contract: to, selector: data.slice(0, 10) as Hex, readable: call.kind !== "unknown" }],
    batch: isBatch(data),
  };
  if (call.kind === "unknown") return called;
  const moves = (call.kind === "multicall" ? call.calls : [call]).map((inner) => movesOf(inner, to, chainId));
  return {
    ...called,
    counterparties: moves.flatMap((move) => move.counterparties),
    tokens: moves.flatMap((move) => move.tokens),
    unlimitedApproval: moves.some((move) => move.unlimitedApproval),
  };
}

/** Several calls as one request: what they send added up, every party and contract kept. */
function together(parts: CallFacts[]): CallFacts {
  return {
    native: parts.reduce((sum, part) => sum + part.native, 0n),
    calls: parts.flatMap((part) => part.calls),
    counterparties: parts.flatMap((part) => part.counterparties),
    tokens: summed(parts.flatMap((part) => part.tokens)),
    unlimitedApproval: parts.some((part) => part.unlimitedApproval),
    batch: parts.some((part) => part.batch),
  };
}

/** What the DeleGator would run, as the calls it makes; `uncounted` says why it cannot be read when it cannot. */
function executionsFacts(call: DeleGatorCall, chainId: number | null, subject: string): CallFacts & { uncounted: string | null } {
  if (call.kind === "unreadable") return { ...NO_CALL, uncounted: `${subject} cannot be read: ${call.reason}` };
  const executions = call.runs.flatMap((run) => run.executions);
  const parts = executions.map(({ target, value, callData }) => callFacts(target, value, callData, chainId));
  return { ...together(parts), batch: executions.length > 1 || parts.some((part) => part.batch), uncounted: null };
}

function typedDataFacts(typedData: TypedDataDefinition, frameworkOf: FrameworkOf) {
  const domain = (typedData.domain ?? {}) as { verifyingContract?: unknown; name?: unknown; chainId?: unknown };
  const chainId = domain.chainId === undefined ? null : Number(domain.chainId);
  const base = {
    kind: "sign_typed_data" as const,
    chainId,
    domain: {
      verifyingContract: typeof domain.verifyingContract === "string" ? domain.verifyingContract : null,
      name: typeof domain.name === "string" ? domain.name : null,
    },
  };
  const framework = chainId === null ? null : frameworkOf(chainId);
  const delegation = recogniseDelegation(typedData, framework);
  if (delegation) {
    const why = (bound: Bound<unknown>) => ("uncounted" in bound ? `the delegation to ${delegation.delegate}: ${bound.uncounted}` : null);
    const { native, tokens } = delegation;
    return {
      ...base,
      ...NO_CALL,
      native: "counted" in native ? native.counted : 0n,
      counterparties: [delegation.delegate],
      tokens: "counted" in tokens ? tokens.counted.map((move) => ({ ...move, chainId })) : [],
      // A delegation that bounds less than everything it may move hands the delegate all of the rest.
      unlimitedApproval: "uncounted" in native || "uncounted" in tokens,
      readable: true,
      uncounted: { native: why(native), tokens: why(tokens) },
    };
  }
  const operation = recogniseUserOperation(typedData, framework);
  if (operation) {
    const runs = executionsFacts(operation.call, chainId, `the user operation's ${operation.call.functionName}`);
    const uncounted = runs.uncounted ?? (operation.uncounted && `the user operation: ${operation.uncounted}`);
    return {
      ...base,
      ...runs,
      native: runs.native + operation.gas,
      readable: operation.call.kind === "runs" && runs.calls.every((call) => call.readable),
      uncounted: { native: uncounted, tokens: uncounted },
    };
  }
  const permit = recognisePermit(typedData);
  return {
    ...base,
    ...NO_CALL,
    counterparties: permit ? [payeeOf(permit) ?? permit.spender] : [],
    tokens: summed((permit?.amounts ?? []).flatMap(({ token, amount }) => (token ? [{ chainId: permit!.chainId, token, amount }] : []))),
    unlimitedApproval: permit ? permit.amounts.some((entry) => isUnlimitedAmount(entry.amount)) : false,
    readable: permit !== null,
    uncounted: { native: null, tokens: null },
  };
}

export function factsOf(payload: Intent, frameworkOf: FrameworkOf): RequestFacts {
  if (payload.kind === "sign_message") {
    return { kind: payload.kind, chainId: null, ...NO_CALL, readable: true, uncounted: { native: null, tokens: null }, domain: null };
  }
  if (payload.kind === "sign_typed_data") return typedDataFacts(payload.typedData, frameworkOf);
  if (payload.kind === "request_allowance") {
    // Its caps are the chain's, on the allowance itself: the policy judges its chain, its payees and the request count.
    const { chainId, recipients } = payload.allowance;
    const counterparties = recipients.map((recipient) => getAddress(recipient));
    const uncounted = { native: null, tokens: null };
    return { kind: payload.kind, chainId, ...NO_CALL, counterparties, readable: true, uncounted, domain: null };
  }
  const { transaction } = payload;
  const to = getAddress(transaction.to);
  const value = BigInt(transaction.value);
  const base = { kind: payload.kind, chainId: transaction.chainId, domain: null };
  const framework = frameworkOf(transaction.chainId);
  const deleGator = decodeDeleGatorCall(transaction.data, frameworkContracts(framework));
  if (!deleGator) {
    const facts = callFacts(to, value, transaction.data, transaction.chainId);
    return {
      ...base,
      ...facts,
      tokens: summed(facts.tokens),
      readable: facts.calls.every((call) => call.readable),
      uncounted: { native: null, tokens: null },
    };
  }
  // The call into the DeleGator itself, then each call it runs from the wallet (or from a delegator's account).
  const runs = executionsFacts(deleGator, transaction.chainId, `the ${deleGator.functionName} call to ${to}`);
  const self = { contract: to, selector: transaction.data.slice(0, 10) as Hex, readable: deleGator.kind === "runs" };
  return {
    ...base,
    ...runs,
    native: value + runs.native,
    calls: [self, ...runs.calls],
    readable: [self, ...runs.calls].every((call) => call.readable),
    uncounted: { native: runs.uncounted, tokens: runs.uncounted },
  };
}

/**
 * A cap the request would go over, in the rule's terms (wei, or the token's smallest unit): enough to say it in the
 * person's units (policy-words.ts). `resetsAt` is when the last request the window counts leaves it.
 */
export type Breach = {
  window: "transaction" | "day" | "week";
  chainId: number | null;
  /** null for the chain's coin */
  token: Address | null;
  amount: bigint;
  limit: bigint;
  remaining: bigint;
  resetsAt: Date | null;
};

/**
 * A rule the request breaks: which, why, and (for caps) what is left. The message says why in words; the rule's id is
 * a field of its own (the tool error's structuredContent), not part of the sentence.
 */
export class PolicyViolation extends RequestError {
  constructor(
    readonly rule: string,
    readonly reason: string,
    readonly allowance: { limit: string; remaining: string } | null = null,
    readonly breach: Breach | null = null,
  ) {
    super("policy_violation", `Refused by the spending policy: ${reason}`, 403);
  }

  /** The same refusal, its reason said another way (the rule and the machine-readable fields stay). */
  saying(reason: string): PolicyViolation {
    return new PolicyViolation(this.rule, reason, this.allowance, this.breach);
  }
}

/** The requests that hold part of a cap: created within the last week and not released. */
type Held = {
  createdAt: Date;
  nativeValue: string | null;
  tokenAddress: string | null;
  tokenAmount: string | null;
  chainId: number | null;
};

/**
 * What the requests held in the window from `since` add up to, when the oldest of them leaves it (`freesAt`), and
 * when the newest does (`resetsAt`: the whole cap is free again).
 */
function heldSince(held: Held[], since: Date, window: number, amount: (request: Held) => bigint) {
  let used = 0n;
  let oldest: Date | null = null;
  let newest: Date | null = null;
  for (const request of held) {
    if (request.createdAt < since) continue;
    const value = amount(request);
    if (value === 0n) continue;
    used += value;
    if (!oldest || request.createdAt < oldest) oldest = request.createdAt;
    if (!newest || request.createdAt > newest) newest = request.createdAt;
  }
  const after = (at: Date | null) => (at ? new Date(at.getTime() + window) : null);
  return { used, freesAt: after(oldest), resetsAt: after(newest) };
}

/** What a held request counts against the native caps of `chainId`: wei of two chains never add up. */
const nativeOn = (chainId: number | null) => (request: Held) => (request.chainId === chainId ? BigInt(request.nativeValue ?? "0") : 0n);

/** The token amounts of `facts` that a token rule of `policy` caps, each with its rule. */
function cappedTokens(policy: Policy, facts: RequestFacts) {
  return facts.tokens.flatMap((move) => {
    const rule = policy.tokens?.find((entry) => entry.chain_id === move.chainId && same(entry.token, move.token));
    return rule ? [{ rule, move }] : [];
  });
}

/**
 * What a created request holds against the rolling caps: its native value and the one token amount a rule can
 * count (the capped one, or a single token's when none is capped, so a cap added later counts it too).
 */
function holdOf(policy: Policy, facts: RequestFacts) {
  const token = cappedTokens(policy, facts)[0]?.move ?? (facts.tokens.length === 1 ? facts.tokens[0] : null);
  return {
    chainId: facts.chainId ?? token?.chainId ?? null,
    nativeValue: String(facts.native),
    tokenAddress: token?.token ?? null,
    tokenAmount: token ? String(token.amount) : null,
  };
}
type Hold = ReturnType<typeof holdOf>;

const same = (a: string | null, b: string | null) => a !== null && b !== null && a.toLowerCase() === b.toLowerCase();

/** The rules that need to know where tokens go and how many, in the order they are checked. */
const TOKEN_RULES = [
  ["recipients", "recipient"],
  ["no_unlimited_approvals", "approval"],
  ["tokens", "token amounts"],
] as const;

/**
 * Default deny: under a rule about tokens, what the decoder cannot read is refused, naming the rule, unless the
 * person named the contract (or the typed data's verifyingContract) among those allowed. A capped token's
 * unknown function, and a batch not decoded whole under a token cap, are refused even then: the cap could not
 * be counted.
 */
function unreadable(policy: Policy, facts: RequestFacts): PolicyViolation | null {
  if (facts.readable) return null;
  // A call that cannot be read (a transaction's, or one the DeleGator runs), else typed data that cannot.
  const call = facts.calls.find((candidate) => !candidate.readable);
  const target = call?.contract ?? facts.domain?.verifyingContract ?? null;
  const what = call ? `the call ${call.selector} to ${call.contract}` : `typed data for ${target ?? "no contract"}`;
  const capped = policy.tokens?.some((rule) => rule.chain_id === facts.chainId && same(rule.token, target));
  if (capped)
    return new PolicyViolation("tokens", `${what} is not a token call this wallet can read, so the token's cap cannot be counted`);
  if (facts.batch && policy.tokens?.length) {
    return new PolicyViolation("tokens", `${what} is a batch of calls that cannot be read whole, so the token caps cannot be counted`);
  }
  const active = TOKEN_RULES.find(([rule]) => (rule === "no_unlimited_approvals" ? policy[rule] === true : policy[rule] !== undefined));
  const named = call ? policy.contracts !== undefined : policy.typed_data?.verifying_contracts !== undefined;
  // The contract checks ran first: a list that exists here names this contract (or verifyingContract).
  if (!active || named) return null;
  const [rule, subject] = active;
  const allow = call ? "allow the contract under contracts" : "allow its verifyingContract under typed_data.verifying_contracts";
  return new PolicyViolation(rule, `${what} cannot be read, so its ${subject} cannot be checked; ${allow} to let the agent ask for it`);
}

const NATIVE_CAPS = ["per_transaction", "per_day", "per_week"] as const;

/**
 * What may move but cannot be counted (calls the DeleGator would run that cannot be read, a delegation its caveats do
 * not bound, a user operation with a paymaster) is refused under any cap of its kind, naming the first such cap: a cap
 * that cannot be counted must not be approximated.
 */
function uncountable(policy: Policy, facts: RequestFacts): PolicyViolation | null {
  const nativeCap = NATIVE_CAPS.find((window) => policy.native?.[window] !== undefined);
  if (facts.uncounted.native && nativeCap) {
    return new PolicyViolation(`native.${nativeCap}`, `${facts.uncounted.native}; so what it may send cannot be counted against the limit`);
  }
  if (facts.uncounted.tokens && policy.tokens?.length) {
    return new PolicyViolation("tokens", `${facts.uncounted.tokens}; so the tokens it may move cannot be counted against their caps`);
  }
  return null;
}

/** Checks `facts` against `policy`, given what earlier requests hold; the first rule broken, or null. */
export function violationOf(
  policy: Policy,
  facts: RequestFacts,
  held: Held[],
  requestsThisHour: number,
  now: Date,
): PolicyViolation | null {
  if (policy.requests_per_hour !== undefined && requestsThisHour >= policy.requests_per_hour) {
    return new PolicyViolation("requests_per_hour", `at most ${policy.requests_per_hour} requests an hour`, {
      limit: String(policy.requests_per_hour),
      remaining: "0",
    });
  }
  if (facts.kind === "sign_message" && policy.sign_message === false)
    return new PolicyViolation("sign_message", "message signing is not allowed");
  if (facts.domain && policy.typed_data) {
    const { verifying_contracts: contracts, names } = policy.typed_data;
    if (contracts && !contracts.some((allowed) => same(allowed, facts.domain!.verifyingContract))) {
      return new PolicyViolation(
        "typed_data.verifying_contracts",
        `verifyingContract ${facts.domain.verifyingContract ?? "(none)"} is not allowed`,
      );
    }
    if (names && !names.includes(facts.domain.name ?? "")) {
      return new PolicyViolation("typed_data.names", `domain name ${JSON.stringify(facts.domain.name)} is not allowed`);
    }
  }
  if (policy.chains && facts.kind === "sign_typed_data" && facts.chainId === null) {
    return new PolicyViolation("chains", "typed data whose domain names no chainId could be used on any chain");
  }
  if (facts.chainId !== null && policy.chains && !policy.chains.includes(facts.chainId)) {
    return new PolicyViolation("chains", `chain ${facts.chainId} is not allowed (allowed: ${policy.chains.join(", ")})`);
  }
  for (const { contract, selector } of policy.contracts ? facts.calls : []) {
    const allowed = policy.contracts!.find((entry) => same(entry.address, contract));
    if (!allowed) return new PolicyViolation("contracts", `calls to ${contract} are not allowed`);
    if (allowed.selectors && !allowed.selectors.some((allowedSelector) => same(allowedSelector, selector))) {
      return new PolicyViolation("contracts.selectors", `function ${selector} of ${contract} is not allowed`);
    }
  }
  const unread = unreadable(policy, facts) ?? uncountable(policy, facts);
  if (unread) return unread;
  const stranger = facts.counterparties.find((party) => policy.recipients && !policy.recipients.some((allowed) => same(allowed, party)));
  if (stranger) return new PolicyViolation("recipients", `${stranger} is not an allowed recipient`);
  if (facts.unlimitedApproval && policy.no_unlimited_approvals) {
    return new PolicyViolation("no_unlimited_approvals", "unlimited approvals are not allowed");
  }
  const unheld = { used: 0n, resetsAt: null };
  const cap = (
    rule: string,
    limit: string | undefined,
    move: { amount: bigint; chainId: number | null; token: Address | null },
    window: Breach["window"],
    { used, resetsAt }: { used: bigint; resetsAt: Date | null },
  ) => {
    if (limit === undefined || move.amount === 0n || used + move.amount <= BigInt(limit)) return null;
    const remaining = BigInt(limit) > used ? BigInt(limit) - used : 0n;
    return new PolicyViolation(
      rule,
      `${move.amount} would exceed the limit of ${limit} (${remaining} left)`,
      { limit, remaining: String(remaining) },
      { ...move, window, limit: BigInt(limit), remaining, resetsAt },
    );
  };
  const native = policy.native ?? {};
  const nativeMove = { amount: facts.native, chainId: facts.chainId, token: null };
  const nativeHeld = (window: number) => heldSince(held, new Date(now.getTime() - window), window, nativeOn(facts.chainId));
  const nativeBreach =
    cap("native.per_transaction", native.per_transaction, nativeMove, "transaction", unheld) ??
    cap("native.per_day", native.per_day, nativeMove, "day", nativeHeld(DAY)) ??
    cap("native.per_week", native.per_week, nativeMove, "week", nativeHeld(WEEK));
  if (nativeBreach) return nativeBreach;
  const capped = cappedTokens(policy, facts);
  if (capped.length > 1) {
    return new PolicyViolation(
      "tokens",
      "a permit of several capped tokens cannot be counted against their caps; ask for one token at a time",
    );
  }
  for (const { rule, move } of capped) {
    const today = heldSince(held, new Date(now.getTime() - DAY), DAY, (request) =>
      request.chainId === move.chainId && same(request.tokenAddress, move.token) ? BigInt(request.tokenAmount ?? "0") : 0n,
    );
    const breach =
      cap("tokens.per_transaction", rule.per_transaction, move, "transaction", unheld) ??
      cap("tokens.per_day", rule.per_day, move, "day", today);
    if (breach) return breach;
  }
  return null;
}

const HOLDING = ["pending", "approved", "submitted", "completed"].map((status) => `'${status}'`).join(", ");

/**
 * The (grant, credential)'s policy, and how many of its requests wait for the person, counted only up to `limit`, the
 * one that refuses more (an index range of pending rows; tooManyWaiting needs no more), so that it costs the same
 * however many there are. One statement: on PostgreSQL each is a round trip. The limit is written into the SQL: SQLite
 * prepares a statement again on every run when a subquery's LIMIT is a parameter (a tenth of a creation's SQLite time).
 */
function policyAndWaiting(limit: number): string {
  // Built once per limit: it runs on every request's creation.
  if (policyAndWaitingSql?.limit !== limit)
    policyAndWaitingSql = {
      limit,
      sql: `SELECT (SELECT "policy" FROM "GrantCredential" WHERE "grantId" = ? AND "credentialId" = ?) AS "policy",
  ${waitingUpTo(limit)} AS "waiting"`,
    };
  return policyAndWaitingSql.sql;
}
let policyAndWaitingSql: { limit: number; sql: string } | undefined;
/** How many of the (grant, credential)'s requests wait for the person, counted up to `limit` (grant, credential, now). */
const waitingUpTo = (limit: number) =>
  `(SELECT COUNT(*) FROM (SELECT 1 FROM "AgentRequest" WHERE "grantId" = ? AND "credentialId" = ? AND "status" = 'pending'
    AND "expiresAt" > ? LIMIT ${Math.trunc(limit)}) AS "pending")`;
/** How many of the (grant, credential)'s requests were created in the last hour: read only for a per-hour cap. */
const THIS_HOUR = `SELECT COUNT(*) AS "count" FROM "AgentRequest" WHERE "grantId" = ? AND "credentialId" = ? AND "createdAt" >= ?`;
/**
 * The requests of the last week that hold what they would spend (a pending one past its expiry is expired, whether
 * or not anyone has looked at it since). Times as text: SQLite stores them so, and PostgreSQL's text of a timestamp
 * names no zone, where its driver would read one in the process's zone.
 */
const HELD = `SELECT CAST("createdAt" AS TEXT) AS "createdAt", "nativeValue", "tokenAddress", "tokenAmount", "chainId"
  FROM "AgentRequest" WHERE "grantId" = ? AND "credentialId" = ? AND "createdAt" >= ?
    AND "status" IN (${HOLDING}) AND NOT ("status" = 'pending' AND "expiresAt" <= ?)`;

/** A stored time read as text: SQLite's ISO string with its offset, or PostgreSQL's UTC without one. */
function storedTime(text: string): Date {
  return new Date(/(Z|[+-]\d\d:\d\d)$/.test(text) ? text : `${text.replace(" ", "T")}Z`);
}

/** The policy of (grant, credential), and what its requests hold: each held one only when a cap counts them. */
function* standing(
  grantId: string,
  credentialId: string,
  now: Date,
): TransactionScript<{ policy: Policy; text: string | null; held: Held[]; thisHour: number; waiting: number }> {
  const [entry] = yield* rowsOf<{ policy: string | null; waiting: number | string }>(
    policyAndWaiting(config().pendingRequestsPerCredential),
    grantId,
    credentialId,
    grantId,
    credentialId,
    now,
  );
  const policy = parsePolicy(entry.policy ?? "{}");
  const weekAgo = new Date(now.getTime() - WEEK);
  const [thisHour] =
    policy.requests_per_hour === undefined
      ? [{ count: 0 }]
      : yield* rowsOf<{ count: number | string }>(THIS_HOUR, grantId, credentialId, new Date(now.getTime() - HOUR));
  let held: Held[] = [];
  if (policy.native || policy.tokens?.length) {
    const rows = yield* rowsOf<Omit<Held, "createdAt"> & { createdAt: string }>(HELD, grantId, credentialId, weekAgo, now);
    held = rows.map((row) => ({ ...row, createdAt: storedTime(row.createdAt) }));
  }
  return { policy, text: entry.policy, held, thisHour: Number(thisHour.count), waiting: Number(entry.waiting) };
}

/**
 * The one rule the server sets for every credential, whatever the person's policy: how many of a grant's requests
 * may wait for the person at once. Without it an agent could fill the person's approvals with thousands.
 */
function tooManyWaiting(waiting: number): PolicyViolation | null {
  const limit = config().pendingRequestsPerCredential;
  if (waiting < limit) return null;
  return new PolicyViolation(
    "pending_requests",
    `at most ${limit} requests may wait for the person at once; wait for a decision (get_request) or cancel one (cancel_request)`,
    { limit: String(limit), remaining: "0" },
  );
}

export function parsePolicy(stored: string): Policy {
  const parsed = policySchema.safeParse(JSON.parse(stored));
  // A stored policy is validated when it is written; one that no longer parses refuses everything rather than nothing.
  return parsed.success ? parsed.data : { requests_per_hour: 0 };
}

/** Any constant: the advisory lock namespace of policy checks on PostgreSQL. */
const POLICY_LOCK = 7_100_424;

type Judged = { grantId: string; credentialId: string; now: Date };

/** The policy of (grant, credential) as the transaction reads it, and the first rule `facts` break given what is held. */
function* judge(
  input: Judged,
  facts: RequestFacts,
): TransactionScript<{ policy: Policy; text: string | null; violation: PolicyViolation | null }> {
  const { policy, text, held, thisHour, waiting } = yield* standing(input.grantId, input.credentialId, input.now);
  return { policy, text, violation: violationOf(policy, facts, held, thisHour, input.now) ?? tooManyWaiting(waiting) };
}

/**
 * The policy text of each (grant, credential) as this process last read it, when that policy has no rolling cap and no
 * hourly count: then all it decides, but how many requests wait for the person, is the request itself (common beside an
 * allowance, which is the cap). Such a request is judged by that text before its transaction, which requires the text
 * unchanged and the waiting requests below the limit: the database judges both, and on PostgreSQL the whole transaction
 * is one round trip. A policy changed meanwhile, or too many waiting, goes the full way, which reads everything again.
 */
const policiesWithoutCounts = new LRUCache<string, { text: string; policy: Policy }>({ max: 10_000 });

const countsNothing = (policy: Policy) =>
  policy.requests_per_hour === undefined &&
  policy.native?.per_day === undefined &&
  policy.native?.per_week === undefined &&
  !(policy.tokens ?? []).some((rule) => rule.per_day !== undefined);

/** The policy this process judged by is not the one stored, or too many requests wait: judged the full way instead. */
class JudgedAgain extends Error {}

const POLICY_UNCHANGED = `SELECT 1 AS "unchanged" FROM "GrantCredential" WHERE "grantId" = ? AND "credentialId" = ? AND "policy" = ?`;
/** Fewer than `limit` of the (grant, credential)'s requests wait for the person (policyAndWaiting's count). */
const waitingBelow = (limit: number) => `SELECT 1 AS "below" WHERE ${waitingUpTo(limit)} < ${Math.trunc(limit)}`;

/**
 * Throws the rule `intent` breaks, before anything is prepared for it: a transaction is judged before the chain
 * is asked for its nonce, gas or fees, so a refused request never reaches the node and never fails for another
 * reason. Not exact under concurrency: withinPolicy checks again, under the lock, as it creates the request.
 */
export async function checkPolicy(input: Judged & { intent: Intent }): Promise<void> {
  const { violation } = await runTransaction(() => judge(input, factsOf(input.intent, allowanceFramework)));
  if (violation) throw violation;
}

/**
 * Checks that the grant is live and its policy for `credentialId` allows the request, and then creates it with
 * `create` — all in one transaction, serialized per (grant, credential): across processes by an advisory lock on
 * PostgreSQL, by SQLite's single writer. The grant's check waits for no answer: on PostgreSQL it goes out with the
 * policy's read, and refuses before anything is created.
 */
async function withinPolicy<T>(input: Judged & { payload: RequestPayload }, create: (hold: Hold) => TransactionScript<T>): Promise<T> {
  const facts = factsOf(input.payload, allowanceFramework);
  const key = `${input.grantId}:${input.credentialId}`;
  function* locked(): TransactionScript<void> {
    // SQLite: the transaction holds the single write lock from its start, so no other writer slips in between the
    // check and the insert.
    if (usesPostgres()) yield* unanswered(`SELECT pg_advisory_xact_lock(${POLICY_LOCK}, hashtext(?))`, key);
    yield* grantStaysLive(input.grantId);
  }
  const known = policiesWithoutCounts.get(key);
  if (known && !violationOf(known.policy, facts, [], 0, input.now)) {
    try {
      return await runTransaction(function* () {
        yield* locked();
        const judgedAgain = () => new JudgedAgain();
        yield* required(judgedAgain, POLICY_UNCHANGED, input.grantId, input.credentialId, known.text);
        const limit = config().pendingRequestsPerCredential;
        yield* required(judgedAgain, waitingBelow(limit), input.grantId, input.credentialId, input.now);
        return yield* create(holdOf(known.policy, facts));
      });
    } catch (error) {
      if (!(error instanceof JudgedAgain)) throw error;
      policiesWithoutCounts.delete(key);
    }
  }
  return runTransaction(function* () {
    yield* locked();
    const { policy, text, violation } = yield* judge(input, facts);
    if (text !== null && countsNothing(policy)) policiesWithoutCounts.set(key, { text, policy });
    if (violation) throw violation;
    return yield* create(holdOf(policy, facts));
  });
}

/**
 * Creates the agent's request for `payload` under the policy's lock, holding its amounts against the rolling caps;
 * refused when the grant is no longer live (a revocation that won the race leaves no request behind it). `also`: the
 * caller's own statements for the request (by its id), run in the same transaction once the policy allows it (they may
 * refuse it too). `idempotency`: the tool call's key, stored with the request (a key the grant's request of that tool
 * holds already refuses it: IdempotencyKeyTaken), and the tool's answer for the request's id when a retry is answered
 * with it rather than with the request's view.
 */
export function createWithinPolicy(
  agent: AgentContext,
  credentialId: string,
  payload: RequestPayload,
  now: Date,
  fields: {
    status: "pending" | "approved" | "completed";
    expiresAt: Date;
    reason?: string;
    decidedAt?: Date;
    completedAt?: Date;
    idempotency?: KeyedRequest;
    /**
     * What the policy judges and holds in the stored payload's stead: a funding of the agent's account (lib/x402/account.ts)
     * is judged as the payment it funds, to the merchant, so that its allowed recipients are the merchants'.
     */
    judgedAs?: RequestPayload;
  },
  also?: (requestId: string) => TransactionScript<void>,
) {
  const keyed = fields.idempotency;
  return withinPolicy({ grantId: agent.grantId, credentialId, now, payload: fields.judgedAs ?? payload }, function* (hold) {
    const id = randomId("rq_");
    if (keyed) yield* keyStaysFree(agent.grantId, keyed.tool, keyed.key);
    if (also) yield* also(id);
    return yield* insertRequest({
      id,
      userId: agent.userId,
      grantId: agent.grantId,
      clientId: agent.clientId,
      credentialId,
      kind: payload.kind,
      ...hold,
      payload: JSON.stringify(payload),
      digest: payloadDigest(payload, keccak256),
      createdAt: now,
      reason: fields.reason ?? null,
      decidedAt: fields.decidedAt ?? null,
      completedAt: fields.completedAt ?? null,
      status: fields.status,
      expiresAt: fields.expiresAt,
      idempotencyTool: keyed?.tool ?? null,
      idempotencyKey: keyed?.key ?? null,
      idempotencyHash: keyed?.hash ?? null,
      toolAnswer: keyed?.answer ? JSON.stringify(keyed.answer(id)) : null,
    });
  });
}

/** get_policy: the rules for one of the agent's credentials and what is left of each cap right now. */
export async function policyView(agent: AgentContext, credentialId: string, now: Date = new Date()): Promise<PolicyView> {
  const granted = agent.credentials.find((entry) => entry.credentialId === credentialId);
  if (!granted) throw new RequestError("credential_not_granted", `Credential ${credentialId} is not in this client's grant`, 403);
  return { credential_id: credentialId, mode: granted.mode, ...(await policyStanding(agent.grantId, credentialId, now)) };
}

/** The policy of one (grant, credential) and what is left of each of its caps at `now`. */
export async function policyStanding(grantId: string, credentialId: string, now: Date): Promise<Pick<PolicyView, "policy" | "remaining">> {
  const { policy, held, thisHour } = await runTransaction(() => standing(grantId, credentialId, now));
  const allowanceOf = (limit: string | undefined, window: number, amount: (request: Held) => bigint) => {
    if (limit === undefined) return null;
    const { used, freesAt } = heldSince(held, new Date(now.getTime() - window), window, amount);
    const remaining = BigInt(limit) > used ? BigInt(limit) - used : 0n;
    return { limit, used: String(used), remaining: String(remaining), frees_at: freesAt?.toISOString() ?? null };
  };
  // Native caps count each chain on its own, in its own coin; without a native cap there is nothing to list.
  const chains = policy.native ? config().chains.filter((chain) => !policy.chains || policy.chains.includes(chain.id)) : [];
  const nativeByChain = chains.map((chain) => ({
    chain_id: chain.id,
    chain_name: chain.name,
    symbol: chain.symbol,
    per_transaction: policy.native?.per_transaction ?? null,
    per_day: allowanceOf(policy.native?.per_day, DAY, nativeOn(chain.id)),
    per_week: allowanceOf(policy.native?.per_week, WEEK, nativeOn(chain.id)),
  }));
  /** The chain with the least left: what an agent may count on whichever chain it uses. */
  const tightest = (window: "per_day" | "per_week") =>
    nativeByChain
      .map((entry) => entry[window])
      .reduce(
        (least, allowance) => (least && allowance && BigInt(least.remaining) <= BigInt(allowance.remaining) ? least : allowance),
        null,
      );
  return {
    policy,
    remaining: {
      native_per_transaction: policy.native?.per_transaction ?? null,
      native_per_day: tightest("per_day"),
      native_per_week: tightest("per_week"),
      native_by_chain: nativeByChain,
      tokens: await Promise.all(
        (policy.tokens ?? []).map(async (rule) => {
          // Its symbol and decimals, to say the caps in whole tokens; read within a bound, so nothing waits on a slow chain.
          const chain = config().chains.find((candidate) => candidate.id === rule.chain_id);
          const asset = chain ? await tokenAsset(chain, getAddress(rule.token)) : null;
          return {
            chain_id: rule.chain_id,
            token: rule.token,
            per_transaction: rule.per_transaction ?? null,
            per_day: allowanceOf(rule.per_day, DAY, (request) =>
              request.chainId === rule.chain_id && same(request.tokenAddress, rule.token) ? BigInt(request.tokenAmount ?? "0") : 0n,
            ),
            symbol: asset?.symbol ?? null,
            decimals: asset?.decimals ?? null,
          };
        }),
      ),
      requests_this_hour:
        policy.requests_per_hour === undefined
          ? null
          : { limit: policy.requests_per_hour, used: thisHour, remaining: Math.max(0, policy.requests_per_hour - thisHour) },
    },
  };
}

/**
 * The person changes the rules of one credential in one of their grants (after a passkey step-up, in the
 * route). Only an active grant's approve- or allowance-mode credential has rules; read credentials cannot ask for
 * signatures. The mode itself never changes here.
 * Requests already created keep counting against the new caps.
 */
export async function changePolicy(
  userId: string,
  change: { grantId: string; credentialId: string; policy: Policy },
  clock: Clock = systemClock,
): Promise<void> {
  const { grantId, credentialId, policy } = change;
  const entry = await db().grantCredential.findFirst({
    where: { grantId, credentialId, grant: { userId, status: "active" } },
    select: { mode: true, policy: true, grant: { select: { clientId: true } } },
  });
  if (!entry) throw new NotFoundError("The grant's credential");
  // An allowance credential's payments pass the policy first; its mode stays what consent made it.
  if (entry.mode === "read")
    throw new AppError(
      "read_only_credential",
      "This credential is granted read-only: it cannot ask for signatures, so it has no limits",
      400,
    );
  await db().grantCredential.update({
    where: { grantId_credentialId: { grantId, credentialId } },
    data: { policy: JSON.stringify(policy) },
  });
  await recordAudit(
    {
      type: "policy.changed",
      userId,
      clientId: entry.grant.clientId,
      credentialId,
      // As canonical JSON text: the log redacts keys that look secret, and a policy's `tokens` is not.
      data: { grant: grantId, from: canonicalJson(parsePolicy(entry.policy)), to: canonicalJson(policy) },
    },
    clock,
  );
}
