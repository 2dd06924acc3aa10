// Approvals the 2026-07-28 way: a sensitive tool called by a client that can open a URL answers
// `input_required` with a URL-mode elicitation of the request's approval page, and a requestState naming the
// request. The client retries with it until the person has decided; the retry reports on that same request,
// never a second one. Every other client gets the pending request and polls get_request (docs/decisions/0008).
import { hkdfSync } from "node:crypto";
import {
  CLIENT_CAPABILITIES_META_KEY,
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  type ClientCapabilities,
  type InputRequiredResult,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { config } from "@/lib/config";
import type { AgentContext } from "@/lib/wallet/agent-context";
import { REQUEST_TTL_SECONDS, RequestError } from "@/lib/wallet/request-lifecycle";
import { cancelRequest, getRequest } from "@/lib/wallet/requests";
import type { RequestKind, RequestView } from "@/contract";
import { agentOf } from "./caller";

/** What a requestState carries: which request, and how many input_required answers the flow has had. */
type ApprovalState = { request_id: string; round: number };

/** The inputRequests key of the approval elicitation. */
const APPROVAL = "approval";

/**
 * input_required answers per call before a still-pending request ends the flow with its plain pending view,
 * under the SDK client's default cap (10 rounds, after which it throws instead of returning a result).
 */
const MAX_ROUNDS = 8;

/** How long a retry waits for the person before answering input_required again, unless wait_seconds says otherwise. */
export const APPROVAL_ROUND_SECONDS = 30;

/** A sensitive tool's input_required answer, with the request it is about (for the audit event). */
export class ApprovalPrompt {
  constructor(
    readonly result: InputRequiredResult,
    readonly requestId: string,
  ) {}
}

/** The grant a state belongs to: a state replayed under another grant's (or client's) bearer fails verification. */
function principalOf(ctx: ServerContext): string {
  const agent = agentOf(ctx.http?.authInfo);
  return `${agent.clientId}\0${agent.grantId}`;
}

/**
 * HMAC-SHA-256 under a key derived from the server's session secret (shared by every instance), bound to the
 * principal, and by default valid as long as the request it names can still be approved.
 */
export function approvalStateCodec(ttlSeconds = REQUEST_TTL_SECONDS) {
  return createRequestStateCodec<ApprovalState>({
    key: new Uint8Array(hkdfSync("sha256", config().sessionSecret, "", "agent-wallet mcp requestState v1", 32)),
    ttlSeconds,
    bind: principalOf,
  });
}

let codec: ReturnType<typeof approvalStateCodec> | undefined;

function stateCodec() {
  codec ??= approvalStateCodec();
  return codec;
}

/** ServerOptions.requestState.verify: a tampered, expired or foreign state is refused (-32602) before any tool runs. */
export function verifyApprovalState(state: string, ctx: ServerContext): Promise<ApprovalState> {
  return stateCodec().verify(state, ctx);
}

/** Whether this request's client declared URL-mode elicitation (2026-07-28: in the per-request _meta envelope). */
export function canApproveByUrl(ctx: ServerContext): boolean {
  const capabilities = ctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY as keyof typeof ctx.mcpReq.envelope] as
    ClientCapabilities | undefined;
  return capabilities?.elicitation?.url !== undefined;
}

async function prompt(view: RequestView, round: number, ctx: ServerContext, elicit: boolean): Promise<ApprovalPrompt> {
  const requestState = await stateCodec().mint({ request_id: view.request_id, round }, ctx);
  const inputRequests = elicit
    ? {
        [APPROVAL]: inputRequired.elicitUrl({
          message: `Approve this ${view.kind.replace(/_/g, " ")} request with your passkey in Agent Wallet`,
          url: view.approval_url,
        }),
      }
    : undefined;
  return new ApprovalPrompt(inputRequired({ ...(inputRequests && { inputRequests }), requestState }), view.request_id);
}

/** The first answer to a sensitive call: send the person to the approval page. */
export function askForApproval(view: RequestView, ctx: ServerContext): Promise<ApprovalPrompt> {
  return prompt(view, 1, ctx, true);
}

/**
 * A retry carrying the approval state: a declined or cancelled elicitation cancels the request; otherwise the
 * retry waits (`hold`) for the person, then answers the request's view once it left pending, or asks the
 * client to retry again (no new elicitation: the page is open) until MAX_ROUNDS, when the pending view ends it.
 */
export async function resumeApproval(
  agent: AgentContext,
  kind: RequestKind,
  ctx: ServerContext,
  hold: (view: RequestView) => Promise<RequestView>,
): Promise<RequestView | ApprovalPrompt> {
  const state = ctx.mcpReq.requestState<ApprovalState>()!;
  const view = await getRequest(agent, state.request_id);
  if (view.kind !== kind) {
    throw new RequestError("request_state_mismatch", `This requestState belongs to a ${view.kind} request, not ${kind}`, 400);
  }
  const answer = inputResponse(ctx.mcpReq.inputResponses, APPROVAL);
  if (answer.kind === "elicit" && answer.action !== "accept") return cancelIfPending(agent, view);
  const now = await hold(view);
  if (now.status !== "pending" || state.round >= MAX_ROUNDS) return now;
  return prompt(now, state.round + 1, ctx, false);
}

async function cancelIfPending(agent: AgentContext, view: RequestView): Promise<RequestView> {
  if (view.status !== "pending") return view;
  try {
    return await cancelRequest(agent, view.request_id);
  } catch (error) {
    // The person decided in the meantime: report that decision.
    if (error instanceof RequestError) return getRequest(agent, view.request_id);
    throw error;
  }
}
