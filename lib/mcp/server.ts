import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { AgentContext } from "@/lib/oauth/bearer";
import { listGrantedCredentials } from "@/lib/wallet/credentials";
import { recordAudit } from "@/lib/audit";

const credentialOutput = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(["evm", "evm_watch"]),
  address: z.string(),
  mode: z.enum(["read", "approve"]),
});

/** A fresh MCP server whose tools see exactly the caller's grant. */
export function createMcpServer(agent: AgentContext): McpServer {
  const server = new McpServer({ name: "agent-wallet", version: "0.1.0" }, { capabilities: { tools: {} } });

  server.registerTool(
    "list_credentials",
    {
      title: "List credentials",
      description: "The wallet credentials this client was granted, with the approval mode of each (read: no signatures; approve: signatures wait for the person's passkey).",
      outputSchema: { credentials: z.array(credentialOutput) },
      annotations: { readOnlyHint: true },
    },
    async () => {
      const credentials = await listGrantedCredentials(agent);
      await recordAudit({ type: "mcp.tool_called", userId: agent.userId, clientId: agent.clientId, data: { tool: "list_credentials", outcome: "ok" } });
      return { content: [{ type: "text", text: JSON.stringify({ credentials }) }], structuredContent: { credentials } };
    },
  );

  return server;
}
