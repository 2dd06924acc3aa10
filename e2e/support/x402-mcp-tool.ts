// A paid MCP tool, as x402's MCP transport (specs/transports-v2/mcp.md) has it, built with the MCP SDK's own server
// (stateless Streamable HTTP) and `@x402/core`'s resource server: `forecast` answers an unpaid call with `isError` and
// the PaymentRequired in `structuredContent` (and as text); a call carrying a PaymentPayload in `_meta["x402/payment"]`
// is verified and settled through the sale's facilitator before it answers, with the settlement in the result's
// `_meta["x402/payment-response"]`. A payment that does not verify or settle is answered with the requirement again,
// its `error` saying why.
import express from "express";
import { z } from "zod";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import type { McpToolCall, McpToolResult } from "agent-wallet/sdk";
import { listen, saleServer, type PaidResource, type Sale } from "./x402-resource";

export async function startPaidMcpTool(sale: Sale): Promise<PaidResource> {
  const { server, accepts } = saleServer(sale);
  await server.initialize();
  const offered: PaymentRequirements[] = await server.buildPaymentRequirements(
    accepts as Parameters<typeof server.buildPaymentRequirements>[0],
  );
  const resource = { url: "mcp://paid-weather/tools/forecast", description: sale.description, mimeType: "application/json" };

  async function paymentRequired(error: string): Promise<CallToolResult> {
    const required = await server.createPaymentRequiredResponse(offered, resource, error);
    return {
      isError: true,
      structuredContent: required as unknown as Record<string, unknown>,
      content: [{ type: "text", text: JSON.stringify(required) }],
    };
  }

  function mcpServer(): McpServer {
    const mcp = new McpServer({ name: "paid-weather", version: "1.0.0" });
    mcp.registerTool(
      "forecast",
      { description: "Tomorrow's forecast for a city, for 0.01 USDC a call (x402)", inputSchema: { city: z.string() } },
      async ({ city }, extra) => {
        const payment = extra._meta?.["x402/payment"] as PaymentPayload | undefined;
        if (!payment) return paymentRequired("Payment required");
        const requirements = server.findMatchingRequirements(offered, payment);
        if (!requirements) return paymentRequired("The payment matches none of the offered requirements");
        const verified = await server.verifyPayment(payment, requirements);
        if (!verified.isValid) return paymentRequired(verified.invalidReason ?? "The payment did not verify");
        const settled = await server.settlePayment(payment, requirements);
        if (!settled.success) return paymentRequired(settled.errorReason ?? "The payment did not settle");
        return {
          content: [{ type: "text", text: `Sunny in ${city}` }],
          structuredContent: { city, forecast: "sunny" },
          _meta: { "x402/payment-response": settled },
        };
      },
    );
    return mcp;
  }

  const app = express();
  app.use(express.json());
  app.post("/mcp", async (request, response) => {
    const mcp = mcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on("close", () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(request, response, request.body);
  });
  return listen(app, "/mcp");
}

/** A paid tool's answer as its MCP client reads it. */
export type PaidToolResult = McpToolResult & {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content: { type: string; text: string }[];
};

/** The paid tool's MCP SDK client, as a weather agent connects it: `call` calls a tool, `close` ends the connection. */
export async function paidToolClient(tool: PaidResource) {
  const weather = new Client({ name: "weather-agent", version: "1.0.0" });
  await weather.connect(new StreamableHTTPClientTransport(new URL(tool.url)));
  return { call: (params: McpToolCall) => weather.callTool(params) as Promise<PaidToolResult>, close: () => weather.close() };
}
