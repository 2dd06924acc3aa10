import type { AuthInfo, ServerContext } from "@modelcontextprotocol/server";
import type { AgentContext } from "@/lib/wallet/agent-context";

/**
 * The caller's grant rides the SDK's pass-through auth info: to the server factory, and to requestState binding;
 * so do the tools the request calls, the only ones its server registers (lib/mcp/server.ts).
 */
export function authInfoOf(agent: AgentContext, token: string, calledTools: ReadonlySet<string>): AuthInfo {
  return { token, clientId: agent.clientId, scopes: ["mcp"], extra: { agent, calledTools } };
}

/** The names of the tools a request (one message or a batch) calls. */
export function toolsCalledBy(message: unknown): Set<string> {
  const messages = Array.isArray(message) ? message : [message];
  const names = messages.map((entry) => {
    const call = entry as { method?: unknown; params?: { name?: unknown } } | null;
    return call?.method === "tools/call" && typeof call.params?.name === "string" ? call.params.name : undefined;
  });
  return new Set(names.filter((name) => name !== undefined));
}

export function calledToolsOf(authInfo: AuthInfo | undefined): ReadonlySet<string> {
  return (authInfo?.extra?.calledTools as ReadonlySet<string> | undefined) ?? new Set();
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
