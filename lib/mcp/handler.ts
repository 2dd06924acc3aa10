import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { config } from "@/lib/config";
import { resolveBearer } from "@/lib/oauth/bearer";
import { InvalidTokenError } from "@/lib/oauth/errors";
import { protectedResourceMetadataUrl } from "@/lib/oauth/metadata";
import { errorResponse, json, PUBLIC_CORS, withHeaders } from "@/lib/http/respond";
import { createMcpServer } from "./server";

/** Scopes the 401 challenge suggests, so MCP clients can ask to stay connected (DESIGN.md §5). */
const CHALLENGE_SCOPE = "mcp offline_access";

function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, "")}"`;
}

/** The RFC 6750 / RFC 9728 challenge for a missing or unusable bearer. */
export function bearerChallenge(error: InvalidTokenError): string {
  const parts = [`resource_metadata=${quoted(protectedResourceMetadataUrl(config()))}`, `scope=${quoted(CHALLENGE_SCOPE)}`];
  if (error.tokenPresented) parts.unshift(`error="invalid_token"`, `error_description=${quoted(error.description)}`);
  return `Bearer ${parts.join(", ")}`;
}

/** POST /mcp (and the other methods): bearer check, then the stateless MCP transport. */
export async function handleMcpRequest(request: Request): Promise<Response> {
  let agent;
  try {
    agent = await resolveBearer(request.headers.get("authorization"));
  } catch (error) {
    if (error instanceof InvalidTokenError) return errorResponse(error, { ...PUBLIC_CORS, "WWW-Authenticate": bearerChallenge(error) });
    return withHeaders(errorResponse(error), PUBLIC_CORS);
  }
  if (request.method !== "POST") {
    return json({ error: "method_not_allowed", error_description: "This MCP endpoint is stateless: use POST" }, { status: 405, headers: { ...PUBLIC_CORS, Allow: "POST" } });
  }
  const server = createMcpServer(agent);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return withHeaders(await transport.handleRequest(request), PUBLIC_CORS);
  } finally {
    void server.close();
  }
}
