import type { AuthInfo, ServerContext } from "@modelcontextprotocol/server";
import type { AgentContext } from "@/lib/wallet/agent-context";

/** The caller's grant rides the SDK's pass-through auth info: to the server factory, and to requestState binding. */
export function authInfoOf(agent: AgentContext, token: string): AuthInfo {
  return { token, clientId: agent.clientId, scopes: ["mcp"], extra: { agent } };
}

/** The caller's grant, as the bearer check resolved it (lib/mcp/handler.ts). */
export function agentOf(authInfo: AuthInfo | undefined): AgentContext {
  const agent = authInfo?.extra?.agent as AgentContext | undefined;
  if (!agent) throw new Error("no agent on this request");
  return agent;
}

/**
 * Aborts when the call is cancelled or its HTTP request ends (the client hung up). The SDK's own signal covers
 * cancellation, and the HTTP request only on the 2026-07-28 path; the request's own signal covers both eras.
 */
export function hangUpSignal(ctx: ServerContext): AbortSignal {
  const request = ctx.http?.req?.signal;
  return request ? AbortSignal.any([ctx.mcpReq.signal, request]) : ctx.mcpReq.signal;
}
