import type { AuthInfo } from "@modelcontextprotocol/server";
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
