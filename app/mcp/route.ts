import { handleMcpRequest } from "@/lib/mcp/handler";
import { preflight } from "@/lib/http/respond";

export const POST = handleMcpRequest;
export const GET = handleMcpRequest;
export const DELETE = handleMcpRequest;
export const OPTIONS = preflight;
