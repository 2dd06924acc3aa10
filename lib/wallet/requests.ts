// The agent's side of a request: a sensitive tool creates one, and the agent
// reads, lists, cancels and waits on its own grant's requests. The lifecycle
// (transitions, expiry, settlement) lives in request-lifecycle.ts; the person's
// side in approvals.ts.
import { getAddress, numberToHex, type Hex, type TypedDataDefinition } from "viem";
import { db } from "@/lib/db";
import { recordAudit, type CallEvent } from "@/lib/audit";
import { addSeconds, systemClock, type Clock } from "@/lib/clock";
import { NotFoundError } from "@/lib/http/errors";
import { isFinalStatus, type RequestView, type ToolInput } from "@/contract";
import type { AgentContext } from "./agent-context";
import type { AgentCall, KeyedRequest } from "./idempotency";
import { allowanceFramework, chainById, onChain } from "./chains";
import { auditedRuns, type AuditedRuns } from "./deleGator-calls";
import { frameworkContracts } from "./delegation-framework";
import { asRevert } from "./reverts";
import type { AskedAllowance, PreparedTransaction, RequestPayload, X402Context } from "./request-payload";
import {
  currentRequest,
  REQUEST_TTL_SECONDS,
  RequestError,
  reloadRequest,
  toView,
  transitionRequest,
  type RequestRow,
} from "./request-lifecycle";
import { checkedTypedData, TypedDataError } from "./typed-data";
import { checkPolicy, createWithinPolicy, PolicyViolation } from "./policy";
import { inPersonsUnits } from "./policy-words";

/** A credential of the agent's grant that may be asked for signatures, as the bearer check loaded it. */
function signingCredential(agent: AgentContext, credentialId: string) {
  const entry = agent.credentials.find((candidate) => candidate.credentialId === credentialId);
  if (!entry) throw new RequestError("credential_not_granted", `Credential ${credentialId} is not in this client's grant`, 403);
  if (entry.mode === "read") {
    throw new RequestError(
      "read_only_credential",
      `Credential ${credentialId} is granted read-only: this client may not ask for signatures with it`,
      403,
    );
  }
  if (entry.kind !== "evm") throw new RequestError("watch_only_credential", `Credential ${entry.name} is watch-only: it cannot sign`, 400);
  return { id: entry.credentialId, address: entry.address, kind: entry.kind, name: entry.name };
}

/** The typed data to sign, or a tool error naming the field that makes it unreviewable or invalid. */
function typedDataOf(input: ToolInput<"sign_typed_data">["typed_data"]): TypedDataDefinition {
  try {
    return checkedTypedData(input);
  } catch (error) {
    if (error instanceof TypedDataError) throw new RequestError("invalid_typed_data", error.message, 400);
    throw error;
  }
}

async function prepareTransaction(from: `0x${string}`, input: ToolInput<"send_transaction">): Promise<PreparedTransaction> {
  const chain = chainById(input.chain_id);
  const to = getAddress(input.to);
  const value = BigInt(input.value);
  const data = (input.data ?? "0x") as `0x${string}`;
  return onChain(chain.id, async (client) => {
    // A transaction the chain would refuse is refused here, with the chain's reason, before the person is asked.
    const estimate = client
      .request({ method: "eth_estimateGas", params: [{ from, to, value: numberToHex(value), data }] })
      .then((answer) => BigInt(answer))
      .catch((error: unknown) => {
        throw asRevert(error);
      });
    const [gas, fees] = await Promise.all([estimate, client.estimateFeesPerGas()]);
    return {
      type: "eip1559",
      chainId: chain.id,
      to,
      value: value.toString(),
      data,
      // Fixed when the person approves (lib/wallet/nonces.ts): queued requests may be approved in any order.
      nonce: null,
      gas: gas.toString(),
      maxFeePerGas: fees.maxFeePerGas.toString(),
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString(),
    };
  });
}

/** A transaction the agent asks for, as the spending policy judged it. */
export type AskedTransaction = { chainId: number; to: Hex; value: string; data: Hex };

/**
 * Pays a transaction with no one at a browser (an allowance: lib/allowances/agent.ts), recorded as a request of its
 * own; or says why it goes to the person instead.
 */
export type Payer = (
  agent: AgentContext,
  credentialId: string,
  transaction: AskedTransaction,
  clock: Clock,
  call?: AgentCall,
) => Promise<RequestView | { toPerson: string }>;

/**
 * A policy's refusal as the agent reads it, in the person's units, recorded with those words in the audit log so the
 * person's log says the same.
 */
export async function policyRefusal(
  agent: AgentContext,
  credential: { id: string; name: string },
  kind: string,
  violation: PolicyViolation,
  clock: Clock,
): Promise<PolicyViolation> {
  const refused = await inPersonsUnits(violation, credential.name, clock());
  await recordAudit(
    {
      type: "policy.refused",
      userId: agent.userId,
      clientId: agent.clientId,
      credentialId: credential.id,
      data: { kind, rule: violation.rule, ...(violation.allowance ?? {}), words: refused.reason },
    },
    clock,
  );
  return refused;
}

/** What a DeleGator call runs, for its request's first audit event (deleGator-calls.ts). */
function runsOf(chainId: number, data: Hex): { runs?: AuditedRuns } {
  const runs = auditedRuns(data, frameworkContracts(allowanceFramework(chainId)));
  return runs ? { runs } : {};
}

/**
 * A sensitive tool: creates a pending request for the person to approve. A payment with an `allowance` credential
 * is first offered to `payer`, within the spending policy, and goes to the person only when it does not pay it (the
 * payer records `called`, the tool call's audit event, with its own when it pays). Typed data that authorizes an x402
 * payment (lib/x402/one-tap.ts) carries `x402`: what it pays for, and the payment its signature completes; and
 * `reason`, why the credential's allowance did not pay it. `idempotency`: the call's key, stored with whichever request
 * it creates (a key taken already refuses it: lib/wallet/idempotency.ts).
 */
export async function createRequest(
  agent: AgentContext,
  input:
    | ({ kind: "sign_message" } & ToolInput<"sign_message">)
    | ({ kind: "sign_typed_data" } & ToolInput<"sign_typed_data">)
    | ({ kind: "send_transaction" } & ToolInput<"send_transaction">)
    | { kind: "request_allowance"; credential_id: string; allowance: AskedAllowance; wait_seconds?: number },
  options: { payer?: Payer; called?: CallEvent; idempotency?: KeyedRequest; x402?: X402Context; reason?: string } = {},
  clock: Clock = systemClock,
): Promise<RequestView> {
  const typedData = input.kind === "sign_typed_data" ? typedDataOf(input.typed_data) : null;
  const credential = signingCredential(agent, input.credential_id);
  const address = credential.address as `0x${string}`;
  const now = clock();
  const judged = { grantId: agent.grantId, credentialId: credential.id, now };
  let row: RequestRow;
  // why an allowance did not pay it, when it did not (an x402 payment's caller says so itself)
  let reason = options.reason;
  try {
    let payload: RequestPayload;
    if (input.kind === "sign_message") payload = { kind: "sign_message", message: input.message };
    else if (input.kind === "sign_typed_data")
      payload = { kind: "sign_typed_data", typedData: typedData!, ...(options.x402 && { x402: options.x402 }) };
    else if (input.kind === "request_allowance") payload = { kind: "request_allowance", allowance: input.allowance };
    else {
      const transaction: AskedTransaction = {
        chainId: input.chain_id,
        to: getAddress(input.to),
        value: String(BigInt(input.value)),
        data: (input.data ?? "0x") as `0x${string}`,
      };
      const mode = agent.credentials.find((entry) => entry.credentialId === credential.id)?.mode;
      // The payer judges the policy itself, under its lock, before it sends anything.
      if (mode === "allowance" && options.payer) {
        const paid = await options.payer(agent, credential.id, transaction, clock, {
          called: options.called,
          idempotency: options.idempotency,
        });
        if (!("toPerson" in paid)) return paid;
        reason = paid.toPerson;
      }
      await checkPolicy({ ...judged, intent: { kind: "send_transaction", transaction } });
      payload = { kind: "send_transaction", transaction: await prepareTransaction(address, input) };
    }
    row = await createWithinPolicy(agent, credential.id, payload, now, {
      status: "pending",
      expiresAt: addSeconds(now, REQUEST_TTL_SECONDS),
      ...(reason ? { reason } : {}),
      idempotency: options.idempotency,
    });
  } catch (error) {
    if (error instanceof PolicyViolation) throw await policyRefusal(agent, credential, input.kind, error, clock);
    throw error;
  }
  await recordAudit(
    {
      type: "request.transition",
      userId: agent.userId,
      clientId: agent.clientId,
      credentialId: credential.id,
      requestId: row.id,
      // What a payment sends where, so the audit log can say it in words from its own events.
      data: {
        kind: row.kind,
        to: "pending",
        from: null,
        ...(input.kind === "send_transaction" && {
          chainId: input.chain_id,
          recipient: getAddress(input.to),
          value: String(BigInt(input.value)),
          call: (input.data ?? "0x") !== "0x",
          ...runsOf(input.chain_id, (input.data ?? "0x") as Hex),
        }),
        ...(input.kind === "request_allowance" && { chainId: input.allowance.chainId, delegate: input.allowance.agent }),
        // an x402 payment: what it pays for (its amount and payee are in the typed data)
        ...(options.x402 && { resource: options.x402.resource.url }),
      },
    },
    clock,
  );
  return toView(row);
}

async function agentRequest(agent: AgentContext, requestId: string): Promise<RequestRow> {
  const row = await db().agentRequest.findUnique({ where: { id: requestId } });
  if (!row || row.grantId !== agent.grantId) throw new NotFoundError(`Request ${requestId}`);
  return row;
}

export async function getRequest(agent: AgentContext, requestId: string, clock: Clock = systemClock): Promise<RequestView> {
  return toView(await currentRequest(await agentRequest(agent, requestId), clock));
}

/** A request's view and when it last changed (its creation, decision or end): what an MCP task mirrors. */
export type RequestRecord = { view: RequestView; changedAt: Date };

function recordOf(row: RequestRow): RequestRecord {
  return { view: toView(row), changedAt: row.completedAt ?? row.decidedAt ?? row.createdAt };
}

export async function getRequestRecord(agent: AgentContext, requestId: string, clock: Clock = systemClock): Promise<RequestRecord> {
  return recordOf(await currentRequest(await agentRequest(agent, requestId), clock));
}

/** Where a page of requests starts: after this one, newest first. */
export type RequestPosition = { createdAt: Date; id: string };

/**
 * One page of the grant's requests, newest first, after `position` (keyset on creation time and id, so a
 * request created meanwhile neither shifts nor repeats a page); `next` is where the following page starts.
 */
export async function pageRequests(
  agent: AgentContext,
  position: RequestPosition | undefined,
  size: number,
  clock: Clock = systemClock,
): Promise<{ records: RequestRecord[]; next?: RequestPosition }> {
  const rows = await db().agentRequest.findMany({
    where: {
      grantId: agent.grantId,
      ...(position && {
        OR: [{ createdAt: { lt: position.createdAt } }, { createdAt: position.createdAt, id: { lt: position.id } }],
      }),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: size + 1,
  });
  const page = rows.slice(0, size);
  const last = page.at(-1);
  const records = await Promise.all(page.map(async (row) => recordOf(await currentRequest(row, clock))));
  return { records, ...(rows.length > size && last && { next: { createdAt: last.createdAt, id: last.id } }) };
}

export async function listRequests(
  agent: AgentContext,
  input: ToolInput<"list_requests">,
  clock: Clock = systemClock,
): Promise<RequestView[]> {
  const rows = await db().agentRequest.findMany({
    where: { grantId: agent.grantId, ...(input.status ? { status: input.status } : {}) },
    orderBy: { createdAt: "desc" },
    take: input.limit ?? 20,
  });
  return Promise.all(rows.map(async (row) => toView(await currentRequest(row, clock))));
}

export async function cancelRequest(agent: AgentContext, requestId: string, clock: Clock = systemClock): Promise<RequestView> {
  const row = await currentRequest(await agentRequest(agent, requestId), clock);
  if (row.status !== "pending" || !(await transitionRequest(row, ["pending"], "cancelled", { reason: "Cancelled by the client" }, clock))) {
    const now = await reloadRequest(requestId);
    throw new RequestError("not_pending", `Request ${requestId} is ${now.status}; only a pending request can be cancelled`, 409);
  }
  return toView(await reloadRequest(requestId));
}

/**
 * How many calls of one grant may wait for a decision at once in this process. Past it a call answers with the
 * request as it stands, as `wait_seconds: 0` would, and the agent asks again: each waiting call holds its request
 * open and reads the database twice a second, and an agent's rate limit alone would let it keep a thousand waiting.
 */
const WAITING_CALLS_PER_GRANT = 16;
const waitingCalls = new Map<string, number>();

/**
 * Waits up to `seconds` for the request to leave pending/approved/submitted,
 * polling the database (any instance may decide it), and reports progress.
 * It stops as soon as `signal` aborts (the client hung up): nobody would read the answer.
 */
export async function waitForDecision(
  agent: AgentContext,
  requestId: string,
  seconds: number,
  options: { onProgress?: (elapsed: number, total: number) => Promise<void>; signal?: AbortSignal; clock?: Clock } = {},
): Promise<RequestView> {
  const { onProgress, signal, clock = systemClock } = options;
  const deadline = Date.now() + seconds * 1000;
  let view = await getRequest(agent, requestId, clock);
  const waiting = waitingCalls.get(agent.grantId) ?? 0;
  if (isFinalStatus(view.status) || waiting >= WAITING_CALLS_PER_GRANT) return view;
  waitingCalls.set(agent.grantId, waiting + 1);
  try {
    let lastProgress = 0;
    while (!isFinalStatus(view.status) && Date.now() < deadline && !signal?.aborted) {
      await pause(Math.min(500, Math.max(0, deadline - Date.now())), signal);
      if (signal?.aborted) break;
      const elapsed = Math.round((seconds * 1000 - (deadline - Date.now())) / 1000);
      if (onProgress && elapsed > lastProgress) {
        lastProgress = elapsed;
        await onProgress(elapsed, seconds).catch(() => {});
      }
      view = await getRequest(agent, requestId, clock);
    }
    return view;
  } finally {
    const left = waitingCalls.get(agent.grantId)! - 1;
    if (left) waitingCalls.set(agent.grantId, left);
    else waitingCalls.delete(agent.grantId);
  }
}

/** setTimeout as a promise that also settles when `signal` aborts. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
