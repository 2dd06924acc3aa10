// The benchmark's peer: the MCP SDK's stateless pattern on bare node:http (a web-standard transport per
// request, as in the SDK's examples) doing the same work as /mcp's list_credentials — the same bearer check
// (JWT verified, grant, client and credentials loaded by the same query) — with no Next.js and no audit
// append. Started by scripts/bench.ts with the app's environment; prints "listening <port>" when ready.
import http from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { resolveBearer } from "@/lib/oauth/bearer";
import { listGrantedCredentials } from "@/lib/wallet/credentials";

const port = Number(process.env.PEER_PORT);

async function body(request: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

const server = http.createServer(async (request, response) => {
  try {
    const agent = await resolveBearer(request.headers.authorization ?? null).catch(() => null);
    if (!agent) {
      response.writeHead(401, { "Content-Type": "application/json" }).end('{"error":"invalid_token"}');
      return;
    }
    const mcp = new McpServer({ name: "peer", version: "1.0.0" });
    mcp.registerTool("list_credentials", { description: "The granted credentials" }, async () => {
      const result = listGrantedCredentials(agent);
      return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
    });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await mcp.connect(transport);
    const text = await body(request);
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) if (typeof value === "string") headers.set(name, value);
    const answer = await transport.handleRequest(new Request(`http://127.0.0.1:${port}/mcp`, { method: "POST", headers, body: text }), {
      parsedBody: JSON.parse(text),
    });
    response.writeHead(answer.status, Object.fromEntries(answer.headers)).end(Buffer.from(await answer.arrayBuffer()));
    void mcp.close();
  } catch (error) {
    response.writeHead(500).end(String((error as Error).message));
  }
});

server.listen(port, "127.0.0.1", () => console.log(`listening ${port}`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
