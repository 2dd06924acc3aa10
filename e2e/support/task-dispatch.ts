import type { JsonRpcResponse } from "@modelcontextprotocol/ext-tasks/client";
import type { JsonValue } from "@modelcontextprotocol/ext-tasks/core";
import type { RunningApp } from "./app";

let rpcId = 0;

/**
 * The host's raw request path the ext-tasks client needs for 2026-07-28 task wire shapes (the SDK client's
 * codecs refuse them): one stateless POST with the routing headers that revision requires.
 */
export function rawDispatch(app: RunningApp, bearer: string) {
  return async (request: JsonValue): Promise<JsonRpcResponse> => {
    const message = request as { method: string; params?: { name?: string; taskId?: string } };
    const name = message.params?.taskId ?? message.params?.name;
    const response = await fetch(`${app.baseUrl}/mcp`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${bearer}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": message.method,
        ...(name !== undefined && { "Mcp-Name": name }),
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, ...message }),
    });
    const body = (await response.json()) as { result?: JsonValue; error?: { code: number; message: string } };
    return body.error ? { kind: "error", error: body.error } : { kind: "result", result: body.result! };
  };
}
