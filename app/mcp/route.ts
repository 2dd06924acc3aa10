import { handleMcpRequest } from "@/lib/mcp/handler";
import { preflight } from "@/lib/http/respond";
import { serveDirectly } from "@/lib/http/direct-routes";

export const POST = handleMcpRequest;
export const GET = handleMcpRequest;
export const DELETE = handleMcpRequest;
export const OPTIONS = preflight;

serveDirectly("/mcp", { POST, GET, DELETE, OPTIONS });
