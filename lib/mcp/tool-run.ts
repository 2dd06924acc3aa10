import type { CallToolResult } from "@modelcontextprotocol/server";
import type { z } from "zod";
import type { AgentContext } from "@/lib/wallet/agent-context";
import { recordAudit, recordAuditSoon, type AuditInput, type CallEvent } from "@/lib/audit";
import { HttpError } from "@/lib/http/errors";
import { listGrantedCredentials } from "@/lib/wallet/credentials";
import { getBalance } from "@/lib/prices/balance";
import { PolicyViolation, policyView } from "@/lib/wallet/policy";
import { allowanceForAgent } from "@/lib/allowances/agent";
import { AgentSignsError } from "@/lib/allowances/spend";
import { X402AllowanceRefusal } from "@/lib/x402/pay";
import { idempotencyOf, IdempotencyKeyReused, once, type AgentCall } from "@/lib/wallet/idempotency";
import type { RequestRow } from "@/lib/wallet/request-lifecycle";
import { listRequests } from "@/lib/wallet/requests";
import { TOOLS, type ToolName } from "@/contract";
import { ApprovalPrompt } from "./elicited-approval";

/** A tool's input as its schema parsed it. */
export type ToolInput<N extends ToolName> = z.infer<(typeof TOOLS)[N]["input"]>;

export type ToolOutcome = Record<string, unknown> | ApprovalPrompt;

/**
 * One tools/call: its audit event (for a payment that records it with its own), its idempotency key, and `once`, which
 * answers a retry with that key from the key's request instead of running it again (lib/wallet/idempotency.ts).
 */
export type ToolCall = Required<Pick<AgentCall, "called">> &
  AgentCall & { once: <T>(create: () => Promise<T>, replay: (row: RequestRow) => Promise<T>) => Promise<T> };

/**
 * The read tools whose answer is the caller's grant and the input alone: no waiting, no progress, no approval state,
 * nothing of the call's MCP context. The SDK's server runs them (lib/mcp/server.ts) and so does /mcp's path past the
 * SDK for a plain call (lib/mcp/read-calls.ts, decision 0033).
 */
export const PLAIN_READS = {
  list_credentials: async (agent: AgentContext) => listGrantedCredentials(agent),
  get_balance: (agent: AgentContext, input: ToolInput<"get_balance">) =>
    getBalance(agent, input.credential_id, input.chain_id, input.tokens),
  list_requests: async (agent: AgentContext, input: ToolInput<"list_requests">) => ({ requests: await listRequests(agent, input) }),
  get_policy: (agent: AgentContext, input: ToolInput<"get_policy">) => policyView(agent, input.credential_id),
  get_allowance: (agent: AgentContext, input: ToolInput<"get_allowance">) => allowanceForAgent(agent, input.credential_id),
} satisfies { [N in ToolName]?: (agent: AgentContext, input: ToolInput<N>) => Promise<Record<string, unknown>> };

export type PlainRead = keyof typeof PLAIN_READS;

export function isPlainRead(name: unknown): name is PlainRead {
  return typeof name === "string" && Object.hasOwn(PLAIN_READS, name);
}

function ok<T extends Record<string, unknown>>(result: T): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
}

/**
 * A sensitive tool's call is answered only once its event is committed. A read tool's event is committed
 * within moments, with others, after the answer: the read changed nothing, and a transaction per read call
 * halved read throughput (docs/performance.md).
 */
async function audit(sensitive: boolean, event: AuditInput): Promise<void> {
  if (sensitive) return recordAudit(event);
  recordAuditSoon(event);
}

/**
 * Runs one tool for the caller's grant: its audit event, its idempotency key, and its failure as the tool's error
 * result (a policy refusal, an allowance's refusal, a reused key and an allowance the agent signs for also
 * machine-readable). The result's keys are in the order the SDK's check of a CallToolResult gives them on the wire
 * (content, structuredContent, isError). `idempotency`: the call's key and what it stands for, by default its input's.
 */
export async function runTool<N extends ToolName>(
  agent: AgentContext,
  name: N,
  input: ToolInput<N>,
  run: (call: ToolCall) => Promise<ToolOutcome>,
  idempotency = idempotencyOf(name, input as Record<string, unknown>),
): Promise<CallToolResult | ApprovalPrompt["result"]> {
  const spec = TOOLS[name];
  const credentialId = (input as { credential_id?: string }).credential_id ?? null;
  const audited = { type: "mcp.tool_called", userId: agent.userId, clientId: agent.clientId, credentialId } as const;
  // the call's event, when the tool records it with its own (a payment made at once): then not again here
  let recorded = false;
  const called: CallEvent = (requestId) => {
    recorded = true;
    return { ...audited, requestId, data: { tool: name, outcome: "ok" } };
  };
  // answered from an earlier call with the same idempotency key
  let replayed = false;
  const call: ToolCall = {
    called,
    idempotency,
    once: (create, replay) =>
      once(agent, idempotency, create, (row) => {
        replayed = true;
        return replay(row);
      }),
  };
  try {
    const result = await run(call);
    const prompt = result instanceof ApprovalPrompt;
    if (!recorded)
      await audit(spec.sensitive, {
        ...audited,
        requestId: (prompt ? result.requestId : result.request_id) as string | undefined,
        data: { tool: name, outcome: prompt ? "input_required" : replayed ? "replayed" : "ok" },
      });
    return prompt ? result.result : ok(result);
  } catch (error) {
    const message = error instanceof HttpError ? error.message : "The tool failed unexpectedly";
    if (!(error instanceof HttpError)) console.error(`tool ${name} failed:`, (error as Error).message);
    await audit(spec.sensitive, { ...audited, data: { tool: name, outcome: "error", error: message } });
    // A policy refusal is also machine-readable: the rule and what is left of it; so is an allowance the agent signs for.
    const structured =
      error instanceof PolicyViolation
        ? { structuredContent: { error: error.code, rule: error.rule, allowance: error.allowance } }
        : error instanceof X402AllowanceRefusal
          ? { structuredContent: { error: error.code, left: error.left } }
          : error instanceof IdempotencyKeyReused
            ? { structuredContent: { error: error.code, request_id: error.requestId } }
            : error instanceof AgentSignsError
              ? { structuredContent: { error: error.code } }
              : {};
    return { content: [{ type: "text", text: message }], ...structured, isError: true } satisfies CallToolResult;
  }
}
